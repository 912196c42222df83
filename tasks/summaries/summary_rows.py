"""The summaries of one document, offline: for each episode, each storyline (trunk and branches, in
the order induce_storylines gave them), the whole work and each community, the quotes chosen by
tasks.summaries.select_quotes from the sentences it spans, as `summaries` and `summary_quotes` rows.

Pure functions over the document's sentences (text order) and their `sentence_salience` rows.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from schemas.ids import make_id
from tasks.summaries.salience import sentence_positions
from tasks.summaries.select_quotes import Candidate, select_quotes
from tasks.text import count_words

METHOD = "extractive"
# One summary as made: its `summaries` row and its `summary_quotes` rows.
Made = tuple[dict[str, Any], list[dict[str, Any]]]
# A sentence naming two of a community's key members tells more about the community than one
# naming only one of them.
CO_MENTION_BONUS = 0.3


@dataclass(frozen=True)
class DocumentSentences:
    """One document's sentences in text order with their salience rows (same order)."""

    doc_id: str
    language: str
    sentences: pd.DataFrame
    salience: pd.DataFrame
    section_ordinals: dict[str, int]

    @property
    def n(self) -> int:
        return len(self.sentences)

    def quotable(self) -> np.ndarray:
        """Positions a summary may quote: everything but the front matter."""
        return np.flatnonzero(~self.salience["is_front_matter"].to_numpy(dtype=bool))

    def candidates(
        self,
        positions: Iterable[int],
        groups: Sequence[Hashable] | None = None,
        bonus: np.ndarray | None = None,
    ) -> list[Candidate]:
        """Candidates for select_quotes: each position with its group (default: its section), its
        salience (plus `bonus[position]` when given) and its words."""
        salience = self.salience["salience"].to_numpy(dtype=float)
        words = self.salience["n_words"].to_numpy(dtype=int)
        section_ids = self.sentences["section_id"].to_numpy()
        positions = list(positions)
        return [
            Candidate(
                int(p),
                groups[i] if groups is not None else section_ids[p],
                float(salience[p] + (bonus[p] if bonus is not None else 0.0)),
                max(int(words[p]), 1),
            )
            for i, p in enumerate(positions)
        ]


def summary(
    doc: DocumentSentences,
    level: str,
    subject_id: str,
    ordinal: int,
    title: str,
    ranked: list[int],
    origin: str | None = None,
) -> Made | None:
    """The `summaries` row and its `summary_quotes` rows for quotes chosen in rank order (None
    when nothing was chosen)."""
    if not ranked:
        return None
    summary_id = make_id("sum", doc.doc_id, level, subject_id)
    rank_of = {position: rank for rank, position in enumerate(ranked, start=1)}
    ordered = sorted(ranked, key=lambda p: int(doc.sentences["char_start"].iat[p]))
    rows = doc.sentences.iloc[ordered]
    quotes = [
        {
            "summary_id": summary_id,
            "doc_id": doc.doc_id,
            "position": number,
            "rank": rank_of[p],
            "sentence_id": str(r.sentence_id),
            "section_id": str(r.section_id),
            "chunk_id": str(r.chunk_id),
            "char_start": int(r.char_start),
            "char_end": int(r.char_end),
            "text": str(r.text),
        }
        for number, (p, r) in enumerate(zip(ordered, rows.itertuples()), start=1)
    ]
    text = ("" if doc.language == "zh" else " ").join(q["text"].strip() for q in quotes)
    sections = list(dict.fromkeys(q["section_id"] for q in quotes))
    ordinals = [doc.section_ordinals.get(s, 0) for s in sections]
    row = {
        "summary_id": summary_id,
        "doc_id": doc.doc_id,
        "level": level,
        "subject_id": subject_id,
        "ordinal": ordinal,
        "origin": origin,
        "title": title,
        "text": text,
        "n_words": count_words(text, doc.language),
        "n_quotes": len(quotes),
        "sentence_ids": [q["sentence_id"] for q in quotes],
        "section_ids": sections,
        "first_ordinal": min(ordinals),
        "last_ordinal": max(ordinals),
        "method": METHOD,
    }
    return row, quotes


def _members(doc: DocumentSentences) -> dict[str, list[int]]:
    """Episode id -> its quotable sentence positions, in text order."""
    quotable = set(doc.quotable().tolist())
    found: dict[str, list[int]] = {}
    for position, episode_id in enumerate(doc.salience["episode_id"]):
        if isinstance(episode_id, str) and position in quotable:
            found.setdefault(episode_id, []).append(position)
    return found


def episode_summaries(doc: DocumentSentences, episodes: pd.DataFrame, words: int) -> list[Made]:
    """One summary per episode that has quotable sentences, in episode order."""
    members = _members(doc)
    made = []
    for episode in episodes.sort_values("ordinal").itertuples():
        positions = members.get(str(episode.episode_id), [])
        ranked = select_quotes(doc.candidates(positions, ["episode"] * len(positions)), words)
        made.append(
            summary(doc, "episode", str(episode.episode_id), int(episode.ordinal), str(episode.title), ranked)
        )
    return [m for m in made if m is not None]


def storyline_summaries(doc: DocumentSentences, storylines: pd.DataFrame, words: int) -> list[Made]:
    """One summary per storyline (trunk and branches in their own order), its quotes spread over its
    episodes."""
    members = _members(doc)
    made = []
    for storyline in storylines.sort_values("ordinal").itertuples():
        episode_ids = [str(e) for e in storyline.episode_ids]
        positions = [p for e in episode_ids for p in members.get(e, [])]
        groups = [e for e in episode_ids for _ in members.get(e, [])]
        ranked = select_quotes(doc.candidates(positions, groups), words)
        origin = storyline.origin if isinstance(storyline.origin, str) else None
        made.append(
            summary(
                doc,
                "storyline",
                str(storyline.storyline_id),
                int(storyline.ordinal),
                str(storyline.name),
                ranked,
                origin=origin,
            )
        )
    return [m for m in made if m is not None]


def work_summary(doc: DocumentSentences, title: str, words: int) -> list[Made]:
    """The whole work: quotes spread over the episodes (a sentence outside every episode counts with
    its section) in proportion to their length."""
    positions = doc.quotable()
    episode_ids = doc.salience["episode_id"].to_numpy()
    section_ids = doc.sentences["section_id"].to_numpy()
    groups = [
        e if isinstance(e, str) else f"section:{section_ids[p]}"
        for p, e in zip(positions, episode_ids[positions])
    ]
    made = summary(doc, "work", doc.doc_id, 1, title, select_quotes(doc.candidates(positions, groups), words))
    return [made] if made is not None else []


def community_reports(
    doc: DocumentSentences, communities: pd.DataFrame, mentions: pd.DataFrame, words: int
) -> list[Made]:
    """One report per community: the sentences naming its key members (more of them, more worth),
    spread over the sections where they appear."""
    starts = doc.sentences["char_start"].to_numpy(dtype=np.int64)
    quotable = np.zeros(doc.n, dtype=bool)
    quotable[doc.quotable()] = True
    made = []
    for community in communities.sort_values("ordinal").itertuples():
        keys = set(str(k) for k in community.key_member_ids)
        grounded = mentions[mentions["entity_id"].isin(keys)]
        where = sentence_positions(starts, grounded["char_start"].to_numpy(dtype=np.int64))
        named: dict[int, set[str]] = {}
        for position, entity_id in zip(where, grounded["entity_id"]):
            if 0 <= position < doc.n and quotable[position]:
                named.setdefault(int(position), set()).add(str(entity_id))
        bonus = np.zeros(doc.n)
        for position, ids in named.items():
            bonus[position] = CO_MENTION_BONUS * (len(ids) - 1)
        ranked = select_quotes(doc.candidates(sorted(named), bonus=bonus), words)
        made.append(
            summary(
                doc,
                "community",
                str(community.community_id),
                int(community.ordinal),
                str(community.name),
                ranked,
            )
        )
    return [m for m in made if m is not None]
