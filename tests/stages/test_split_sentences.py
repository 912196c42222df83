"""Stage split_sentences: grounded spans, and dialogue sentences carry their speaker."""

from tasks.tables.io import read_frame


def test_sentences_are_grounded_and_carry_speakers(segmented):
    documents = read_frame(segmented, "documents")
    for doc_id in ("kitchen", "shop"):
        text = documents.loc[documents["doc_id"] == doc_id, "text"].iloc[0]
        for sentence in read_frame(segmented, "sentences", doc_id).itertuples():
            assert " ".join(text[sentence.char_start : sentence.char_end].split()) == sentence.text
    sentences = read_frame(segmented, "sentences", "kitchen")
    by_text = dict(zip(sentences["text"], sentences["speaker"]))
    assert by_text["Ben, where were you?"] == "ANNA" and by_text["Gone."] == "BEN"
    zh = read_frame(segmented, "sentences", "shop")
    assert dict(zip(zh["text"], zh["speaker"]))["交不出来啊。"] == "程勇"
