"""Stage split_chunks: every chunk is the exact text of its span."""

from tasks.tables.io import read_frame


def test_chunks_are_grounded(segmented):
    documents = read_frame(segmented, "documents")
    for doc_id in ("kitchen", "shop"):
        text = documents.loc[documents["doc_id"] == doc_id, "text"].iloc[0]
        chunks = read_frame(segmented, "chunks", doc_id)
        assert len(chunks) > 0
        for chunk in chunks.itertuples():
            assert text[chunk.char_start : chunk.char_end] == chunk.text and chunk.n_tokens > 0
