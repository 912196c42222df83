from schemas.ids import make_id, safe_doc_id, stable_hash


def test_make_id_is_deterministic_and_namespaced():
    assert make_id("ent", "doc", "John") == make_id("ent", "doc", "John")
    assert make_id("ent", "doc", "John") != make_id("rel", "doc", "John")
    assert make_id("ent", "doc", "John").startswith("ent_")
    assert len(make_id("ent", "x")) == len("ent_") + 16


def test_stable_hash_depends_on_order_and_content():
    assert stable_hash("a", "b") != stable_hash("b", "a")
    assert stable_hash({"x": 1, "y": 2}) == stable_hash({"y": 2, "x": 1})


def test_safe_doc_id_keeps_clean_ids():
    assert safe_doc_id("en049957b3c0b54085baddbec23e00506c") == "en049957b3c0b54085baddbec23e00506c"
    assert safe_doc_id("the-selfish-giant") == "the-selfish-giant"
    assert safe_doc_id("51150") == "51150"


def test_safe_doc_id_blocks_traversal_and_collisions():
    traversal = safe_doc_id("../../etc/passwd")
    assert "/" not in traversal and ".." not in traversal and traversal
    # Two raw ids that clean to the same text still differ.
    assert safe_doc_id("a b") != safe_doc_id("a/b")
    assert safe_doc_id("a b") != safe_doc_id("a-b")
    assert safe_doc_id("我不是药神") != safe_doc_id("他不是药神")
    assert len(safe_doc_id("x" * 500)) <= 80
