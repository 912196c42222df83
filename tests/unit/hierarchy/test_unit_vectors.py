"""Unit vectors derived from the sentences of their span (or embedded, by setting) and episode
vectors as the token-weighted mean of their units'."""

from __future__ import annotations

import numpy as np

from tasks.embeddings import HashingEmbedder
from tasks.hierarchy.unit_vectors import episode_vectors, unit_vectors, unit_weights
from tasks.hierarchy.units import Unit
from tasks.index.grounded_vectors import SentenceVectors
from tasks.text import count_tokens
from tests.fixtures.embedders import RecordingEmbedder


SENTENCES = ["Anna pours tea.", "Where were you?", "Out."]
STARTS = [0, 16, 32]
SENTENCE_VECTORS = SentenceVectors(
    texts=SENTENCES,
    starts=STARTS,
    ends=[s + len(t) for s, t in zip(STARTS, SENTENCES)],
    chunk_ids=["c1"] * 3,
    vectors=HashingEmbedder(64).embed(SENTENCES),
)


def unit(uid: str, kind: str, text: str, start: int, end: int) -> Unit:
    return Unit(
        unit_id=uid,
        kind=kind,
        index=0,
        ordinal=1,
        section_id="s1",
        char_start=start,
        participants=(),
        setting_id=None,
        description=text,
        unit_type="other",
        event_id=None,
        occasion_ids=(),
        section_ids=("s1",),
        char_end=end,
    )


UNITS = [
    unit("e1", "event", "Anna pours tea.", 0, 15),
    unit("i1", "interaction", "Anna asks Ben: “Where were you?”", 16, 31),
    unit("o1", "occasion", "Scene at the kitchen, night.", -1, -1),
]


def test_derived_unit_vectors_come_from_the_sentences_of_their_span() -> None:
    model = RecordingEmbedder()
    vectors = unit_vectors(UNITS, SENTENCE_VECTORS, model, derive=True)
    plain = HashingEmbedder(64)
    np.testing.assert_allclose(vectors[0], SENTENCE_VECTORS.vectors[0], atol=1e-6)
    words = plain.embed(["Anna asks Ben:"])[0]
    mixed = (
        count_tokens("Where were you?") * SENTENCE_VECTORS.vectors[1] + count_tokens("Anna asks Ben:") * words
    )
    np.testing.assert_allclose(vectors[1], mixed / np.linalg.norm(mixed), atol=1e-6)
    np.testing.assert_allclose(vectors[2], plain.embed([UNITS[2].description])[0], atol=1e-6)
    assert model.seen == [UNITS[2].description, "Anna asks Ben:"]


def test_the_embedded_setting_embeds_every_unit_description() -> None:
    model = RecordingEmbedder()
    vectors = unit_vectors(UNITS, SENTENCE_VECTORS, model, derive=False)
    assert model.seen == [u.description for u in UNITS]
    np.testing.assert_allclose(vectors, HashingEmbedder(64).embed(model.seen), atol=1e-6)


def test_episode_vectors_are_token_weighted_means_of_their_units() -> None:
    vectors = dict(zip(["e1", "i1", "o1"], HashingEmbedder(64).embed([u.description for u in UNITS])))
    weights = unit_weights(UNITS)
    assert weights["i1"] == count_tokens(UNITS[1].description)
    found, missing = episode_vectors(
        ["ep1", "ep2", "ep3"], {"ep1": ["e1", "i1"], "ep2": ["o1"], "ep3": ["gone"]}, vectors, weights
    )
    mean = weights["e1"] * vectors["e1"] + weights["i1"] * vectors["i1"]
    np.testing.assert_allclose(found[0], mean / np.linalg.norm(mean), atol=1e-6)
    np.testing.assert_allclose(found[1], vectors["o1"], atol=1e-6)
    assert missing == [2] and not found[2].any()
