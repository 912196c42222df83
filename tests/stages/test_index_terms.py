"""Stage index_terms: postings for every chunk; Chinese indexed by characters and bigrams."""

from tasks.tables.io import read_frame


def test_postings_cover_every_chunk(segmented):
    for doc_id in ("kitchen", "shop"):
        chunks = read_frame(segmented, "chunks", doc_id)
        postings = read_frame(segmented, "term_postings", doc_id)
        assert set(postings.loc[postings.unit_kind == "chunk", "unit_id"]) == set(chunks.chunk_id)
    zh_terms = set(read_frame(segmented, "term_postings", "shop")["term"])
    assert {"程勇", "房租"} <= zh_terms  # character bigrams
