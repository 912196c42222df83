import hashlib
import json
import random

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


def test_stable_hash_is_the_hash_of_the_canonical_json_whatever_the_parts():
    # Strings and integers take a direct path; it must write the JSON text the encoder writes.
    def reference(*parts: object) -> str:
        text = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    rng = random.Random(0)
    alphabet = 'ab "\\\n\t\x00\x1fé程勇\u2028😀'
    others = [True, False, None, 1.5, float("nan"), ["x", 1, {"b": 1, "a": [2]}], ("t",)]
    for _ in range(3000):
        parts = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
            if rng.random() < 0.5
            else rng.randint(-(10**12), 10**12)
            if rng.random() < 0.8
            else rng.choice(others)
            for _ in range(rng.randint(0, 6))
        ]
        assert stable_hash(*parts) == reference(*parts), parts
