"""Corpus screenplays (two English, one Chinese) written out as Fountain, Final Draft and a typeset
PDF, then read back: the same scene headings, and the same text modulo layout (line wrapping, blank
lines, page furniture, the colon's width after a Chinese speaker, control characters that neither
XML nor a font can carry)."""

from __future__ import annotations

import json
import re

import pytest

from tasks.ingest.read_formats import file_text
from tasks.ingest.segment_sections import segment
from tests.fixtures.screenplay_formats import to_fdx, to_fountain, to_pdf

LAYOUT = re.compile(r"[\s\x00-\x1f]+")


def _screenplays(shared_data) -> list[dict]:
    lines = (shared_data / "stage" / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    documents = [json.loads(line) for line in lines]
    english = [d for d in documents if d["language"] == "en"][:2]
    chinese = [d for d in documents if d["language"] == "zh"][:1]
    assert len(english) == 2 and len(chinese) == 1
    return english + chinese


def _scenes(text: str, language: str) -> list[tuple[str, str]]:
    rows, _ = segment("d", text, language, "screenplay")
    return [
        (r["heading"], LAYOUT.sub("", r["text"]).replace("：", ":"))
        for r in rows
        if r["section_kind"] == "scene"
    ]


@pytest.mark.parametrize("suffix", [".fountain", ".fdx", ".pdf"])
def test_corpus_screenplays_read_back_from_each_format(shared_data, tmp_path, suffix):
    for document in _screenplays(shared_data):
        text, language = document["text"], document["language"]
        path = tmp_path / f"{document['doc_id']}{suffix}"
        if suffix == ".fountain":
            path.write_text(to_fountain(text, language), encoding="utf-8")
        elif suffix == ".fdx":
            path.write_text(to_fdx(text, language), encoding="utf-8")
        else:
            to_pdf(text, language, path)
        read, _, _ = file_text(path, path.read_bytes(), 10_000_000)
        expected, got = _scenes(text, language), _scenes(read, language)
        assert [h for h, _ in got] == [h for h, _ in expected], document["doc_id"]
        differ = [h for (h, a), (_, b) in zip(expected, got) if a != b]
        assert not differ, (document["doc_id"], differ[:3])
