import json

from tasks.ingest.ingest_documents import decode_bytes
from tasks.ingest.scan import ingest_paths

LIMIT = 1_000_000


def test_plain_markdown_and_fountain(tmp_path):
    (tmp_path / "story.md").write_text("# The Owl\n\nAn owl lived in a tree.\n", encoding="utf-8")
    (tmp_path / "play.fountain").write_text("Title: Play\n\nEXT. FIELD - DAY\n\nA cow.\n", encoding="utf-8")
    result = ingest_paths([tmp_path], max_chars=LIMIT)
    by_id = {d.doc_id: d for d in result.documents}
    assert by_id["story"].title == "The Owl" and by_id["story"].kind == "prose"
    assert by_id["play"].kind == "screenplay" and by_id["play"].title == "Play"
    assert not result.failures


def test_jsonl_documents_keep_ids_and_meta(tmp_path):
    path = tmp_path / "documents.jsonl"
    lines = [
        {
            "doc_id": "a1",
            "title": "A",
            "text": "INT. A - DAY\nx\n\nEXT. B - DAY\ny",
            "language": "en",
            "meta": {"k": 1},
        },
        {"doc_id": "../evil", "title": "E", "text": "Some text."},
        "not json",
        {"doc_id": "a1", "title": "dup", "text": "Again."},
    ]
    path.write_text("\n".join(json.dumps(l) if isinstance(l, dict) else l for l in lines), encoding="utf-8")
    result = ingest_paths([path], max_chars=LIMIT)
    ids = [d.doc_id for d in result.documents]
    assert ids[0] == "a1" and result.documents[0].kind == "screenplay" and result.documents[0].meta["k"] == 1
    assert "/" not in ids[1] and ".." not in ids[1]
    assert ids[2] != "a1" and ids[2].startswith("a1-")  # a duplicate id never overwrites
    assert len(result.failures) == 1 and "invalid JSON on line 3" in result.failures[0].error


def test_bad_inputs_become_failures_not_crashes(tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "blank.txt").write_text("   \n\n", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02PK\x03\x04" * 100)
    (tmp_path / "big.txt").write_text("word " * 300_000, encoding="utf-8")
    (tmp_path / "good.txt").write_text("A fine story.", encoding="utf-8")
    result = ingest_paths([tmp_path, tmp_path / "missing.txt"], max_chars=1_000_000)
    errors = {f.doc_id: f.error for f in result.failures}
    assert "empty document" in errors["empty"] and "empty document" in errors["blank"]
    assert "binary" in errors["binary"]
    assert "too large" in errors["big"]
    assert "no such file" in errors["missing"]
    assert [d.doc_id for d in result.documents] == ["good"]


def test_non_utf8_text_is_decoded_with_a_notice(tmp_path):
    (tmp_path / "latin.txt").write_bytes("Café au lait, naïve.".encode("cp1252"))
    (tmp_path / "gbk.txt").write_bytes("程勇走进药店。".encode("gb18030"))
    result = ingest_paths([tmp_path], max_chars=LIMIT)
    by_id = {d.doc_id: d for d in result.documents}
    assert by_id["latin"].text == "Café au lait, naïve." and by_id["latin"].encoding == "cp1252"
    assert by_id["gbk"].text == "程勇走进药店。" and by_id["gbk"].language == "zh"
    assert len(result.notices) == 2 and all("not UTF-8" in n for n in result.notices)
    assert decode_bytes(b"\xff\xfeA\x00")[1] == "utf-16"


def test_same_file_name_in_two_folders_gets_two_ids(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "story.txt").write_text(f"Story from {folder}.", encoding="utf-8")
    result = ingest_paths([tmp_path / "a", tmp_path / "b"], max_chars=LIMIT)
    ids = [d.doc_id for d in result.documents]
    assert ids[0] == "story" and ids[1] != "story" and len(set(ids)) == 2
    # The workspace remembers who owns "story": rebuilding folder b alone keeps its own id.
    again = ingest_paths(
        [tmp_path / "b"],
        max_chars=LIMIT,
        known_sources={"story": result.documents[0].owner_key, ids[1]: result.documents[1].owner_key},
    )
    assert again.documents[0].doc_id == ids[1]
