"""Episode and storyline vectors derived from their members' vectors, texts quoting source sentences
from those sentences' vectors, others embedded."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.embeddings import HashingEmbedder
from tasks.index.asset_vectors import asset_vectors, grounded_candidates
from tasks.index.grounded_vectors import SentenceVectors
from tasks.text import count_tokens
from tests.fixtures.embedders import RecordingEmbedder


ITEMS = [
    ("entity", "ent-1", "Nadia (person)."),
    ("event", "evt-1", "Nadia arrives at the airport."),
    ("interaction", "int-1", "John asks Nadia about the ticket and the flight."),
    ("episode", "epi-1", "Arrival. Nadia arrives and John asks about the flight."),
    ("episode", "epi-2", "An episode whose units were not embedded."),
    ("storyline", "sto-1", "Nadia and John: the arrival."),
]
TABLES = {
    "episodes": pd.DataFrame({"episode_id": ["epi-1", "epi-2"], "unit_ids": [["evt-1", "int-1"], ["evt-9"]]}),
    "storylines": pd.DataFrame({"storyline_id": ["sto-1"], "episode_ids": [["epi-1", "epi-2"]]}),
}


def _normalised(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def test_embedded_by_default_every_text_once() -> None:
    model = RecordingEmbedder()
    vectors = asset_vectors(ITEMS, TABLES, model, derive_hierarchy=False)
    assert model.seen == [text for _, _, text in ITEMS]
    np.testing.assert_allclose(vectors, HashingEmbedder(64).embed([t for _, _, t in ITEMS]), atol=1e-6)


def test_derived_episode_and_storyline_vectors() -> None:
    model = RecordingEmbedder()
    vectors = asset_vectors(ITEMS, TABLES, model, derive_hierarchy=True)
    plain = HashingEmbedder(64)
    event, interaction = plain.embed([ITEMS[1][2], ITEMS[2][2]])
    weights = [count_tokens(ITEMS[1][2]), count_tokens(ITEMS[2][2])]
    episode = _normalised(weights[0] * event + weights[1] * interaction)
    np.testing.assert_allclose(vectors[3], episode, atol=1e-6)
    # epi-2 has no embedded unit: its own text is embedded; the storyline weighs both by their tokens
    lone = plain.embed([ITEMS[4][2]])[0]
    np.testing.assert_allclose(vectors[4], lone, atol=1e-6)
    storyline = _normalised(sum(weights) * episode + count_tokens(ITEMS[4][2]) * lone)
    np.testing.assert_allclose(vectors[5], storyline, atol=1e-6)
    assert ITEMS[3][2] not in model.seen and ITEMS[5][2] not in model.seen
    assert ITEMS[4][2] in model.seen


SOURCE = ["Where were you?", "Out.", "Ben digs in the garden."]
SOURCE_STARTS = [0, 16, 21]
GROUNDED_TABLES = {
    "interactions": pd.DataFrame({"interaction_id": ["int-1"], "char_start": [0], "char_end": [20]}),
    "atomic_facts": pd.DataFrame({"fact_id": ["fac-1"], "char_start": [21], "char_end": [44]}),
    "relations": pd.DataFrame({"relation_id": ["rel-1"], "chunk_ids": [["c2"]]}),
}
GROUNDED_ITEMS = [
    ("entity", "ent-1", "Ben (character). Out."),  # entities are embedded whole, whatever they quote
    ("interaction", "int-1", "Anna asks Ben: “Where were you?”"),
    ("fact", "fac-1", "Ben digs in the garden."),
    ("relation", "rel-1", "Anna — Ben : Ben digs in the garden. gardening"),
]


def test_texts_quoting_their_sources_are_derived_from_the_sentence_vectors() -> None:
    plain = HashingEmbedder(64)
    sentences = SentenceVectors(
        texts=SOURCE,
        starts=SOURCE_STARTS,
        ends=[s + len(t) for s, t in zip(SOURCE_STARTS, SOURCE)],
        chunk_ids=["c1", "c1", "c2"],
        vectors=plain.embed(SOURCE),
    )
    assert grounded_candidates(GROUNDED_ITEMS, GROUNDED_TABLES, sentences) == [[], [0, 1], [2], [2]]
    model = RecordingEmbedder()
    vectors = asset_vectors(
        GROUNDED_ITEMS, GROUNDED_TABLES, model, derive_hierarchy=True, sentences=sentences
    )
    np.testing.assert_allclose(vectors[0], plain.embed([GROUNDED_ITEMS[0][2]])[0], atol=1e-6)
    asks = plain.embed(["Anna asks Ben:"])[0]
    mean = count_tokens("Where were you?") * sentences.vectors[0] + count_tokens("Anna asks Ben:") * asks
    np.testing.assert_allclose(vectors[1], _normalised(mean), atol=1e-6)
    np.testing.assert_allclose(vectors[2], sentences.vectors[2], atol=1e-6)
    # the words before and after the quoted sentence are two runs, each embedded and weighted apart
    names, keyword = plain.embed(["Anna — Ben :", "gardening"])
    mean = (
        count_tokens(SOURCE[2]) * sentences.vectors[2]
        + count_tokens("Anna — Ben :") * names
        + count_tokens("gardening") * keyword
    )
    np.testing.assert_allclose(vectors[3], _normalised(mean), atol=1e-6)
    assert model.seen == [GROUNDED_ITEMS[0][2], "Anna asks Ben:", "Anna — Ben :", "gardening"]
    # without sentence vectors (the "embedded" setting) every text is embedded whole
    model = RecordingEmbedder()
    whole = asset_vectors(GROUNDED_ITEMS, GROUNDED_TABLES, model, derive_hierarchy=True)
    assert model.seen == [text for _, _, text in GROUNDED_ITEMS]
    np.testing.assert_allclose(whole, plain.embed(model.seen), atol=1e-6)
