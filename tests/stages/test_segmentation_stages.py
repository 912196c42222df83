"""Each segmentation and indexing stage on a small screenplay and a small Chinese scene,
run through the real stage runner (Parquet in, Parquet out, contracts checked)."""

from __future__ import annotations

import numpy as np
import pytest

from flows.corpus import build, make_resources
from flows.stages import select_stages
from tasks.embeddings import HashingEmbedder
from tasks.tables.io import Workspace, read_frame

SCREENPLAY = """Title: Kitchen Test

1 INT. KITCHEN - NIGHT 1

ANNA (30s) pours tea. A BRASS KEY lies on the table.

ANNA
Ben, where were you?

BEN (O.S.)
Out. Looking for the key.

EXT. GARDEN - DAY

Ben digs. He finds nothing.

BEN (CONT'D)
(muttering)
Gone.
"""

CHINESE = """1.     王子神油店日内
程勇在店里。电话铃声响起。
宾馆老板：老程！房租赶紧付吧。
程勇：交不出来啊。

2.街道夜外
程勇看着车走远。
"""


@pytest.fixture()
def built(tmp_path, hashing_settings):
    (tmp_path / "kitchen.fountain").write_text(SCREENPLAY, encoding="utf-8")
    (tmp_path / "shop.txt").write_text(CHINESE, encoding="utf-8")
    workspace = Workspace.at(tmp_path / "ws")
    resources = make_resources(hashing_settings, embedder_factory=lambda: HashingEmbedder(64))
    report = build([str(tmp_path / "kitchen.fountain"), str(tmp_path / "shop.txt")], workspace, hashing_settings,
                   stages=select_stages(until="embed_texts"), resources=resources, use_prefect=False, quiet=True)
    assert report.ok, [o for d in report.documents for o in d.outcomes if o.status != "built"]
    return workspace


def test_sections_parse_headings(built):
    sections = read_frame(built, "sections", "kitchen").sort_values("ordinal")
    assert sections["section_kind"].tolist() == ["preamble", "scene", "scene"]
    assert sections.iloc[1][["interior", "location", "time_of_day", "scene_number"]].tolist() == ["INT", "KITCHEN", "NIGHT", "1"]
    zh = read_frame(built, "sections", "shop").sort_values("ordinal")
    assert zh["location"].tolist() == ["王子神油店", "街道"] and zh["time_of_day"].tolist() == ["DAY", "NIGHT"]


def test_chunks_and_sentences_are_grounded(built):
    documents = read_frame(built, "documents")
    for doc_id in ("kitchen", "shop"):
        text = documents.loc[documents["doc_id"] == doc_id, "text"].iloc[0]
        for chunk in read_frame(built, "chunks", doc_id).itertuples():
            assert text[chunk.char_start:chunk.char_end] == chunk.text and chunk.n_tokens > 0
        for sentence in read_frame(built, "sentences", doc_id).itertuples():
            assert " ".join(text[sentence.char_start:sentence.char_end].split()) == sentence.text
    sentences = read_frame(built, "sentences", "kitchen")
    by_text = dict(zip(sentences["text"], sentences["speaker"]))
    assert by_text["Ben, where were you?"] == "ANNA" and by_text["Gone."] == "BEN"
    zh = read_frame(built, "sentences", "shop")
    assert dict(zip(zh["text"], zh["speaker"]))["交不出来啊。"] == "程勇"


def test_postings_and_embeddings_cover_every_unit(built):
    for doc_id in ("kitchen", "shop"):
        chunks = read_frame(built, "chunks", doc_id)
        sentences = read_frame(built, "sentences", doc_id)
        postings = read_frame(built, "term_postings", doc_id)
        assert set(postings.loc[postings.unit_kind == "chunk", "unit_id"]) == set(chunks.chunk_id)
        embeddings = read_frame(built, "embeddings", doc_id)
        assert len(embeddings) == len(chunks) + len(sentences)
        assert embeddings["model"].unique().tolist() == ["hashing:64"]
        norms = np.linalg.norm(np.array(embeddings["vector"].tolist()), axis=1)
        assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)
    zh_terms = set(read_frame(built, "term_postings", "shop")["term"])
    assert {"程勇", "房租"} <= zh_terms  # character bigrams
