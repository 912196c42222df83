"""Vectors of texts quoting source sentences, derived from the sentences' vectors and the
vector of their remaining words; texts quoting nothing are embedded whole."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.embeddings import HashingEmbedder
from tasks.index.grounded_vectors import (
    SentenceVectors,
    grounded_vectors,
    split_grounded,
    split_grounded_parts,
)
from tasks.text import count_tokens
from tests.fixtures.embedders import RecordingEmbedder


SENTENCES = ["Where were you?", "Out.", "Looking for the key.", "Ben digs in the garden."]
STARTS = [0, 16, 21, 42]


def sentence_vectors() -> SentenceVectors:
    return SentenceVectors(
        texts=SENTENCES,
        starts=STARTS,
        ends=[s + len(t) for s, t in zip(STARTS, SENTENCES)],
        chunk_ids=["c1", "c1", "c1", "c2"],
        vectors=HashingEmbedder(64).embed(SENTENCES),
    )


def _normalised(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def test_split_takes_quoted_sentences_longest_first_between_word_boundaries() -> None:
    taken, rest = split_grounded(
        "Ben tells Anna: “Out. Looking for the key.”", ["Out.", "Looking for the key."]
    )
    assert taken == [(1, "Looking for the key."), (0, "Out.")] and rest == "Ben tells Anna:"
    # "Out." inside "Outside." is no quote of it; a text quoting nothing is left whole
    assert split_grounded("Outside.", ["Out."]) == ([], "Outside.")
    # brackets emptied by the taken sentence go too; a text that is only sentences leaves nothing
    assert split_grounded("Anna appears at Kitchen (INT. KITCHEN)", ["INT. KITCHEN"]) == (
        [(0, "INT. KITCHEN")],
        "Anna appears at Kitchen",
    )
    assert split_grounded("Ben digs in the garden.", SENTENCES) == ([(3, "Ben digs in the garden.")], "")
    # a sentence quoted twice in the text but present once among the candidates is taken once
    assert split_grounded("Out. Out.", ["Out."]) == ([(0, "Out.")], "Out.")


def test_a_quote_cut_short_stands_for_the_sentence_it_begins() -> None:
    line = "I searched the whole harbour office for the gale warning and found nothing at all."
    text = f"Nia tells Ellis: “Out. {line[:40]}…”"
    taken, rest = split_grounded(text, ["Out.", line])
    assert taken == [(0, "Out."), (1, line[:40].strip())] and rest == "Nia tells Ellis:"
    # too short a beginning names no sentence: it stays with the words to embed
    assert split_grounded("Nia: “I searched…”", [line]) == ([], "Nia: “I searched…”")
    # the whole sentence's vector, weighted by the words the text keeps of it
    plain = HashingEmbedder(64)
    sentences = SentenceVectors(
        texts=["Out.", line],
        starts=[0, 5],
        ends=[4, 5 + len(line)],
        chunk_ids=["c1", "c1"],
        vectors=plain.embed(["Out.", line]),
    )
    vector = grounded_vectors([text], [[0, 1]], sentences, plain)[0]
    kept = line[:40].strip()
    mean = (
        count_tokens("Out.") * sentences.vectors[0]
        + count_tokens(kept) * sentences.vectors[1]
        + count_tokens("Nia tells Ellis:") * plain.embed(["Nia tells Ellis:"])[0]
    )
    np.testing.assert_allclose(vector, _normalised(mean), atol=1e-6)


def test_sentences_are_found_by_span_and_by_chunk() -> None:
    sentences = sentence_vectors()
    assert sentences.covering(16, 41) == [1, 2]
    assert sentences.covering(0, 1) == [0] and sentences.covering(15, 16) == []
    assert sentences.covering(30, 30) == []
    assert sentences.of_chunks(["c2", "c1", "c2"]) == [3, 0, 1, 2]


def test_sentence_vectors_come_from_the_embeddings_table_of_the_model() -> None:
    frame = pd.DataFrame(
        {
            "sentence_id": ["s2", "s1", "s3"],
            "chunk_id": ["c1", "c1", "c2"],
            "ordinal": [2, 1, 3],
            "text": ["Out.", "Where were you?", "Ben digs."],
            "char_start": [16, 0, 42],
            "char_end": [20, 15, 51],
        }
    )
    embeddings = pd.DataFrame(
        {
            "unit_kind": ["sentence", "sentence", "chunk", "sentence"],
            "unit_id": ["s1", "s2", "c1", "s3"],
            "model": ["m", "m", "m", "other"],
            "vector": [np.ones(4), np.full(4, 2.0), np.zeros(4), np.zeros(4)],
        }
    )
    found = SentenceVectors.from_tables({"sentences": frame, "embeddings": embeddings}, "m")
    assert found is not None and found.texts == [
        "Where were you?",
        "Out.",
    ]  # text order; s3 has no "m" vector
    np.testing.assert_allclose(found.vectors, [np.ones(4), np.full(4, 2.0)])
    assert SentenceVectors.from_tables({"sentences": frame, "embeddings": embeddings}, "absent") is None
    assert SentenceVectors.from_tables({"sentences": frame}, "m") is None


def test_a_quoting_text_is_the_token_weighted_mean_of_its_sentences_and_remaining_words() -> None:
    sentences, model = sentence_vectors(), RecordingEmbedder()
    texts = [
        "Ben tells Anna: “Out. Looking for the key.”",
        "Ben digs in the garden.",
        "Scene at the kitchen.",
    ]
    vectors = grounded_vectors(texts, [[1, 2], [3], [0, 1]], sentences, model)
    words = HashingEmbedder(64).embed(["Ben tells Anna:"])[0]
    expected = _normalised(
        count_tokens("Out.") * sentences.vectors[1]
        + count_tokens("Looking for the key.") * sentences.vectors[2]
        + count_tokens("Ben tells Anna:") * words
    )
    np.testing.assert_allclose(vectors[0], expected, atol=1e-6)
    np.testing.assert_allclose(vectors[1], sentences.vectors[3], atol=1e-6)
    np.testing.assert_allclose(vectors[2], HashingEmbedder(64).embed([texts[2]])[0], atol=1e-6)
    # only the remaining words and the text quoting nothing went to the model, in one call
    assert model.seen == ["Scene at the kitchen.", "Ben tells Anna:"]


def test_without_sentence_vectors_every_text_is_embedded_whole() -> None:
    model = RecordingEmbedder()
    texts = ["Ben tells Anna: “Out.”", "Ben digs in the garden."]
    vectors = grounded_vectors(texts, [[1], [3]], None, model)
    np.testing.assert_allclose(vectors, HashingEmbedder(64).embed(texts), atol=1e-6)
    assert model.seen == texts


def test_the_words_between_quoted_sentences_are_embedded_run_by_run_each_run_once() -> None:
    # A relation joining a speaker's lines leaves her name before each line: embedding the
    # remainder as one text sent "Ben: Ben: Anna:" to the model; each distinct run goes once.
    sentences, model = sentence_vectors(), RecordingEmbedder()
    texts = [
        "Ben: “Out.” Ben: “Where were you?” Anna: “Looking for the key.”",
        "Ben: “Ben digs in the garden.”",
    ]
    taken, runs = split_grounded_parts(texts[0], SENTENCES[:3])
    assert [index for index, _ in taken] == [2, 0, 1] and runs == ["Ben:", "Ben:", "Anna:"]
    # the joined runs are still the remainder `split_grounded` gives
    assert split_grounded(texts[0], SENTENCES[:3])[1] == "Ben: Ben: Anna:"
    vectors = grounded_vectors(texts, [[0, 1, 2], [3]], sentences, model)
    assert model.seen == ["Ben:", "Anna:"]
    ben, anna = HashingEmbedder(64).embed(["Ben:", "Anna:"])
    expected = _normalised(
        sum(count_tokens(SENTENCES[i]) * sentences.vectors[i] for i in range(3))
        + 2 * count_tokens("Ben:") * ben
        + count_tokens("Anna:") * anna
    )
    np.testing.assert_allclose(vectors[0], expected, atol=1e-6)
    np.testing.assert_allclose(
        vectors[1],
        _normalised(count_tokens(SENTENCES[3]) * sentences.vectors[3] + count_tokens("Ben:") * ben),
        atol=1e-6,
    )
