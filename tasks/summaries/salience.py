"""How much each sentence is worth quoting in an extractive summary, and which episode it belongs to.

A summary sentence reads like the story told from outside: it names the people and places the story
is about, it tells something that happens, and it is close to what the whole document is about.
Spoken lines, fragments and the title page read badly out of context. The signals, per sentence:

- centrality: cosine similarity of its vector to the mean of the document's sentence vectors;
- entity weight: its grounded mentions of named entities, each weighted by log(1 + the entity's
  mentions), so the lead characters count most (capped: a list of names is not a summary);
- narrative: it grounds an event or interaction of the narrative stage;
- penalties for dialogue, fragments and run-ons; front matter is never quoted: edition notes, and the
  title lines (a Markdown heading, the document's title, a byline and the line above it at the opening).

Pure functions over one document's tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tasks.text import count_words

# Entity types whose mentions make a sentence tell the story (times and abstract roles do not).
NAMED_TYPES = frozenset({"character", "group", "location", "object", "institution"})
ENTITY_CAP = 6.0
# Weights of the signals (measured on SQuALITY train plot summaries, see docs/squality.md).
ENTITY_WEIGHT = 0.2
NARRATIVE_WEIGHT = 0.2
DIALOGUE_PENALTY = 0.8
FRAGMENT_PENALTY = 0.5
RUN_ON_PENALTY = 0.3
FRONT_MATTER_SALIENCE = -5.0
# Fragments and run-ons, in words (English) or characters (Chinese, about two per word).
SHORT = {"en": 6, "zh": 10}
LONG = {"en": 45, "zh": 90}

OPENING_QUOTE = re.compile(r"^\s*[\"“‘'「『]")
# Title-page and edition notes of public-domain texts (production credits, transcriber's notes,
# copyright lines, illustration credits): never part of the story.
FRONT_MATTER = re.compile(
    r"\bproduced by\b|\btranscriber'?s? note|\be-?text\b|\bcopyright\b|\bproject gutenberg\b|"
    r"\bdistributed proofreading\b|\bproofreading team\b|\billustrated by\b|\bu\.s\. copyright\b",
    re.IGNORECASE,
)
MARKDOWN_HEADING = re.compile(r"^\s*#{1,6}\s")
# "by Alan E. Nourse", "BY BRYCE WALTON": a line that is nothing but an author's name.
BYLINE = re.compile(r"^\s*(?:by|By|BY)\s+(?:[A-Z][\w.'’-]*\s*){1,5}$")
OPENING_SENTENCES = 12  # where a title page's lines can be: a story sentence may look like one later
TITLE_WORDS = 12


@dataclass(frozen=True)
class UnitSpan:
    """An event or interaction: its span and the episode it was grouped into (None if none)."""

    char_start: int
    char_end: int
    episode_id: str | None


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text).split()).casefold()


def title_lines(texts: list[str], title: str) -> np.ndarray:
    """Per sentence: is it a title line? A Markdown heading anywhere; at the opening, the document's
    title, a byline, and a short line right above a byline (the story's title)."""
    plain_title = _plain(title)
    found = np.array([bool(MARKDOWN_HEADING.match(t)) for t in texts], dtype=bool)
    for i, text in enumerate(texts[:OPENING_SENTENCES]):
        above_byline = (
            i + 1 < len(texts) and bool(BYLINE.match(texts[i + 1])) and len(text.split()) <= TITLE_WORDS
        )
        found[i] |= bool(plain_title) and _plain(text) == plain_title
        found[i] |= bool(BYLINE.match(text)) or above_byline
    return found


def sentence_positions(starts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The sentence (by position in text order) holding each character offset; -1 before the first."""
    return np.searchsorted(starts, offsets, side="right") - 1


def centrality(vectors: np.ndarray | None, n: int) -> np.ndarray:
    """Cosine similarity of each sentence vector to the normalised mean (zeros without vectors)."""
    if vectors is None or vectors.ndim != 2 or vectors.shape[0] != n or vectors.shape[1] < 2:
        return np.zeros(n)
    norms = np.linalg.norm(vectors, axis=1)
    unit = vectors / np.where(norms > 0, norms, 1.0)[:, None]
    mean = unit[norms > 0].mean(axis=0) if (norms > 0).any() else np.zeros(vectors.shape[1])
    length = float(np.linalg.norm(mean))
    return unit @ (mean / length) if length > 0 else np.zeros(n)


def entity_weights(starts: np.ndarray, mentions: pd.DataFrame, entities: pd.DataFrame) -> np.ndarray:
    """Per sentence: the summed log(1 + mentions) of the named entities mentioned in it, capped."""
    weights = np.zeros(len(starts))
    if mentions.empty or entities.empty:
        return weights
    named = entities[entities["entity_type"].isin(NAMED_TYPES) & ~entities["is_proxy"].astype(bool)]
    weight_of = dict(zip(named["entity_id"], np.log1p(named["n_mentions"].astype(float))))
    grounded = mentions[mentions["entity_id"].isin(weight_of)]
    where = sentence_positions(starts, grounded["char_start"].to_numpy())
    values = grounded["entity_id"].map(weight_of).to_numpy(dtype=float)
    inside = where >= 0
    np.add.at(weights, where[inside], values[inside])
    return np.minimum(weights, ENTITY_CAP)


def assign_episodes(starts: np.ndarray, section_ids: list[str], units: list[UnitSpan]) -> list[str | None]:
    """Each sentence's episode: the episode of a unit it grounds, else that of the nearest sentence
    before it in its section that has one, else of the nearest after it there; None in a section
    no unit touches. Episodes then cover the story without gaps, dialogue included."""
    n = len(starts)
    episode: list[str | None] = [None] * n
    for unit in sorted(units, key=lambda u: (u.char_start, u.char_end)):
        position = int(sentence_positions(starts, np.array([unit.char_start]))[0])
        if 0 <= position < n and episode[position] is None and unit.episode_id is not None:
            episode[position] = unit.episode_id
    filled = list(episode)
    for order in (range(n), range(n - 1, -1, -1)):  # forward from the last one, then backward
        carried: tuple[str, str | None] | None = None
        for i in order:
            if carried is not None and carried[0] != section_ids[i]:
                carried = None
            if filled[i] is not None:
                carried = (section_ids[i], filled[i])
            elif carried is not None:
                filled[i] = carried[1]
    return filled


def sentence_salience(
    sentences: pd.DataFrame,
    vectors: np.ndarray | None,
    front_sections: set[str],
    mentions: pd.DataFrame,
    entities: pd.DataFrame,
    units: list[UnitSpan],
    language: str,
    title: str = "",
) -> pd.DataFrame:
    """One `sentence_salience` row per sentence (in text order), with its episode; `title` is the
    document's, whose line is front matter."""
    n = len(sentences)
    starts = sentences["char_start"].to_numpy(dtype=np.int64)
    texts = sentences["text"].astype(str).tolist()
    section_ids = sentences["section_id"].astype(str).tolist()
    speakers = sentences["speaker"].tolist() if "speaker" in sentences else [None] * n
    narrative = np.zeros(n, dtype=bool)
    unit_positions = sentence_positions(starts, np.array([u.char_start for u in units], dtype=np.int64))
    narrative[unit_positions[(unit_positions >= 0) & (unit_positions < n)]] = True
    words = np.array([count_words(t, language) for t in texts])
    dialogue = np.array(
        [
            bool(isinstance(s, str) and s.strip()) or bool(OPENING_QUOTE.match(t))
            for s, t in zip(speakers, texts)
        ]
    )
    front = np.array(
        [s in front_sections or bool(FRONT_MATTER.search(t)) for s, t in zip(section_ids, texts)]
    ) | title_lines(texts, title)
    central = centrality(vectors, n)
    weight = entity_weights(starts, mentions, entities)
    short, long = SHORT.get(language, SHORT["en"]), LONG.get(language, LONG["en"])
    score = (
        central
        + ENTITY_WEIGHT * weight
        + NARRATIVE_WEIGHT * narrative
        - DIALOGUE_PENALTY * dialogue
        - FRAGMENT_PENALTY * (words < short)
        - RUN_ON_PENALTY * (words > long)
    )
    score = np.where(front, FRONT_MATTER_SALIENCE, score)
    return pd.DataFrame(
        {
            "sentence_id": sentences["sentence_id"].astype(str).to_numpy(),
            "doc_id": sentences["doc_id"].astype(str).to_numpy(),
            "ordinal": sentences["ordinal"].astype(int).to_numpy(),
            "episode_id": assign_episodes(starts, section_ids, units),
            "centrality": np.round(central, 6),
            "entity_weight": np.round(weight, 6),
            "is_narrative": narrative,
            "is_dialogue": dialogue,
            "is_front_matter": front,
            "n_words": words.astype(np.int64),
            "salience": np.round(score, 6),
        }
    )
