"""sentence_salience: what makes a sentence worth quoting, and the episode each sentence belongs to."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.summaries.salience import OPENING_SENTENCES, UnitSpan, assign_episodes, sentence_salience

TEXTS = [
    "Produced by the Online Distributed Proofreading Team.",  # front matter
    "Margaret climbs the tower stairs and takes the brass key from its hook.",  # narrative, named
    '"I will not give it to you," she said.',  # dialogue
    "It rained.",  # fragment
    "Daniel waits on the quay below the lighthouse for Margaret to come down.",  # named, no unit
]


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    starts = np.cumsum([0] + [len(t) + 1 for t in TEXTS[:-1]])
    sentences = pd.DataFrame(
        {
            "sentence_id": [f"s{i}" for i in range(len(TEXTS))],
            "doc_id": "d",
            "ordinal": range(1, len(TEXTS) + 1),
            "section_id": ["front", "a", "a", "a", "b"],
            "chunk_id": "c",
            "text": TEXTS,
            "speaker": [None] * len(TEXTS),
            "char_start": starts,
            "char_end": starts + np.array([len(t) for t in TEXTS]),
        }
    )
    entities = pd.DataFrame(
        {
            "entity_id": ["margaret", "daniel", "someone"],
            "entity_type": ["character", "character", "character"],
            "n_mentions": [20, 5, 50],
            "is_proxy": [False, False, True],
        }
    )
    mentions = pd.DataFrame(
        {
            "entity_id": ["margaret", "daniel", "margaret", "someone"],
            "char_start": [starts[1], starts[4], starts[4] + 45, starts[2] + 1],
        }
    )
    return sentences, entities, mentions


def test_salience_prefers_named_narrative_sentences_and_never_quotes_front_matter():
    sentences, entities, mentions = _frames()
    units = [UnitSpan(int(sentences["char_start"][1]), int(sentences["char_end"][1]), "ep1")]
    rows = sentence_salience(sentences, None, set(), mentions, entities, units, "en")
    by_id = rows.set_index("sentence_id")
    assert bool(by_id.loc["s0", "is_front_matter"]) and not by_id["is_front_matter"][1:].any()
    assert bool(by_id.loc["s2", "is_dialogue"]) and bool(by_id.loc["s1", "is_narrative"])
    # Margaret (20 mentions) and Daniel (5) weigh by log(1 + mentions); the proxy does not count.
    assert by_id.loc["s4", "entity_weight"] == round(np.log1p(5) + np.log1p(20), 6)
    assert by_id.loc["s2", "entity_weight"] == 0.0
    ranked = rows.sort_values("salience", ascending=False)["sentence_id"].tolist()
    assert set(ranked[:2]) == {"s1", "s4"} and ranked[-1] == "s0"
    assert by_id.loc["s3", "salience"] < by_id.loc["s4", "salience"]  # a fragment reads badly alone


def test_centrality_comes_from_the_sentence_vectors():
    sentences, entities, mentions = _frames()
    vectors = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [1, 0.2]], dtype=np.float32)
    rows = sentence_salience(sentences, vectors, set(), mentions.iloc[:0], entities, [], "en")
    central = rows["centrality"].to_numpy()
    assert central[3] == central.min() and central[0] > 0.9


def test_episodes_cover_their_sections_without_crossing_them():
    starts = np.array([0, 10, 20, 30, 40, 50])
    sections = ["a", "a", "a", "b", "b", "c"]
    units = [UnitSpan(12, 18, "ep1"), UnitSpan(41, 45, "ep2"), UnitSpan(22, 25, None)]
    assert assign_episodes(starts, sections, units) == ["ep1", "ep1", "ep1", "ep2", "ep2", None]


def _opening(texts: list[str]) -> pd.DataFrame:
    starts = np.cumsum([0] + [len(t) + 1 for t in texts[:-1]])
    return pd.DataFrame(
        {
            "sentence_id": [f"s{i}" for i in range(len(texts))],
            "doc_id": "d",
            "ordinal": range(1, len(texts) + 1),
            "section_id": "a",  # one ordinary section: no preamble marks the title page
            "chunk_id": "c",
            "text": texts,
            "speaker": [None] * len(texts),
            "char_start": starts,
            "char_end": starts + np.array([len(t) for t in texts]),
        }
    )


def test_title_lines_of_a_markdown_story_and_of_a_magazine_story_are_never_quoted():
    story = "Once upon a time there was a poor fisherman who lived with his wife by the sea."
    texts = ["# The Fisherman and His Wife", story, "## Part Two", story.replace("poor", "rich")]
    rows = sentence_salience(_opening(texts), None, set(), pd.DataFrame(), pd.DataFrame(), [], "en")
    assert rows["is_front_matter"].tolist() == [True, False, True, False]
    assert rows["salience"].iloc[0] == rows["salience"].min() < rows["salience"].iloc[1]
    # A Gutenberg magazine story: its title line above the byline, the byline itself; the title the
    # document was given matches whatever its case and punctuation.
    texts = [
        "THE RECRUIT",
        "BY BRYCE WALTON",
        "It was dirty work, but it would make him a man.",
        "Brightside",
    ]
    rows = sentence_salience(
        _opening(texts), None, set(), pd.DataFrame(), pd.DataFrame(), [], "en", title="Brightside."
    )
    assert rows["is_front_matter"].tolist() == [True, True, False, True]
    # Past the opening, a line that reads like a byline is a line of the story.
    texts = [story] * OPENING_SENTENCES + ["Then he shouted", "By Jove"]
    rows = sentence_salience(_opening(texts), None, set(), pd.DataFrame(), pd.DataFrame(), [], "en")
    assert not rows["is_front_matter"].any()
