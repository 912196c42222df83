"""Vectors of texts that quote source sentences, derived from those sentences' vectors.

Many asset texts are made of source sentences already embedded by embed_texts, plus a few words
of their own: an offline interaction is `John tells Nadia: “<the dialogue line>”`, an event is
its sentence, a fact `Nadia says: “<sentence>”`, a relation's description joins quoted source
lines. Such a text's vector is the token-weighted, normalised mean of the vectors of the source
sentences it quotes (found verbatim among the sentences its span or chunks cover) and of the
vectors of its remaining words, one per run between two quoted sentences, each distinct run
embedded once (`John tells Nadia:` recurs, a relation joining Clare's lines has "Clare:" before
each, and the vector store serves a run after the first time). This is the mean pooling the
encoder does over the whole text, taken per part; a text that quotes no sentence is embedded
whole, as before.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from tasks.embeddings import Embedder
from tasks.index.derived_vectors import group_means
from tasks.text import count_tokens, normalize_space

# A quote or bracket left empty once the sentences it held are taken out.
_PAIRS = ("“”", '""', "‘’", "「」", "『』", "()", "（）")
_EMPTY_PAIR = re.compile("|".join(re.escape(o) + r"[\s\x00]*" + re.escape(c) for o, c in _PAIRS))
_WORD = re.compile(r"\w")
_GAP = "\x00"  # stands for a sentence taken out, so no later match runs across it
_ELLIPSIS = "…"
# A cut quote starts after an opening quote, a part already taken or a sentence's end.
_QUOTE_STARTS = (_GAP, "“", '"', "‘", "「", "『", ". ", "? ", "! ")
MIN_CUT_CHARS = 20  # shorter beginnings are too common to name one sentence


@dataclass(frozen=True)
class SentenceVectors:
    """One document's sentences (text order) with their vectors, looked up by span or chunk."""

    texts: list[str]
    starts: list[int]
    ends: list[int]
    chunk_ids: list[str]
    vectors: np.ndarray
    _by_chunk: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)
    _reach: list[int] = field(default_factory=list, compare=False, repr=False)  # max end up to each row

    def __post_init__(self) -> None:
        for row, chunk_id in enumerate(self.chunk_ids):
            self._by_chunk.setdefault(chunk_id, []).append(row)
        self._reach.extend(accumulate(self.ends, max))

    @classmethod
    def from_tables(cls, tables: Mapping[str, pd.DataFrame], model: str) -> "SentenceVectors | None":
        """The `sentences` that have a vector of `model` in `embeddings`; None when none has one
        (or a table is missing)."""
        sentences, embeddings = tables.get("sentences"), tables.get("embeddings")
        if sentences is None or embeddings is None or sentences.empty or embeddings.empty:
            return None
        rows = embeddings[(embeddings["unit_kind"] == "sentence") & (embeddings["model"] == model)]
        frame = sentences.sort_values(["char_start", "ordinal"])
        position = pd.Index(rows["unit_id"]).get_indexer(frame["sentence_id"])  # -1: no vector
        frame, position = frame[position >= 0], position[position >= 0]
        if frame.empty:
            return None
        vectors = rows["vector"].to_numpy()[position]
        return cls(
            texts=frame["text"].astype(str).tolist(),
            starts=frame["char_start"].astype(int).tolist(),
            ends=frame["char_end"].astype(int).tolist(),
            chunk_ids=frame["chunk_id"].astype(str).tolist(),
            vectors=np.stack([np.asarray(v, dtype=np.float32) for v in vectors]),
        )

    def covering(self, start: int, end: int) -> list[int]:
        """Rows of the sentences that overlap the span [start, end)."""
        if end <= start:
            return []
        # rows before `first` all end by `start` (ends seen so far, a non-decreasing sequence)
        first, last = bisect_right(self._reach, start), bisect_left(self.starts, end)
        return [row for row in range(first, last) if self.ends[row] > start]

    def of_chunks(self, chunk_ids: Sequence[str]) -> list[int]:
        """Rows of the sentences of the given chunks."""
        return [row for chunk_id in dict.fromkeys(chunk_ids) for row in self._by_chunk.get(chunk_id, [])]


def _find_quote(rest: str, sentence: str) -> int:
    """Where `sentence` stands in `rest` between word boundaries, else -1."""
    start = rest.find(sentence)
    while start >= 0:
        end = start + len(sentence)
        before_ok = start == 0 or not rest[start - 1].isalnum()
        if before_ok and (end == len(rest) or not rest[end].isalnum()):
            return start
        start = rest.find(sentence, start + 1)
    return -1


def _cut_quotes(rest: str, candidates: Sequence[str], free: set[int]) -> tuple[list[tuple[int, str]], str]:
    """Quotes cut short with an ellipsis (a long dialogue line, a compacted description) that
    begin a free candidate: each stands for that sentence, weighted by the words it keeps."""
    taken: list[tuple[int, str]] = []
    end = rest.find(_ELLIPSIS)
    while end >= 0:
        start = max(rest.rfind(mark, 0, end) for mark in _QUOTE_STARTS) + 1
        part = rest[start:end].strip()
        found = next(
            (i for i in sorted(free) if len(part) >= MIN_CUT_CHARS and candidates[i].startswith(part)), None
        )
        if found is not None:
            free.discard(found)
            taken.append((found, part))
            rest = rest[:start] + _GAP + rest[end + len(_ELLIPSIS) :]
            end = rest.find(_ELLIPSIS, start)
        else:
            end = rest.find(_ELLIPSIS, end + 1)
    return taken, rest


def split_grounded(text: str, candidates: Sequence[str]) -> tuple[list[tuple[int, str]], str]:
    """Which `candidates` (source sentences) `text` quotes, each with the words of `text` that
    stand for it, and the text's remaining words.

    Longer sentences are taken first; each candidate is taken at most once, only between word
    boundaries, and never across a part already taken. A quote cut short with an ellipsis that
    begins a candidate (at least MIN_CUT_CHARS characters of it) stands for that candidate. The
    remainder drops quotes and brackets left empty; it is '' when no word is left."""
    taken, fragments = split_grounded_parts(text, candidates)
    if not taken:
        return [], text
    return taken, " ".join(fragments)


def split_grounded_parts(text: str, candidates: Sequence[str]) -> tuple[list[tuple[int, str]], list[str]]:
    """`split_grounded` with the remaining words kept as the runs between the quoted sentences
    (those with a word in them): a relation joining many quoted lines leaves the same run again
    and again ("John appears at John's Bedroom" before each of its scene headings, "Clare:" before
    each of her lines), and each distinct run is embedded once. With no quote: ([], [text])."""
    taken: list[tuple[int, str]] = []
    rest = text
    for index in sorted(range(len(candidates)), key=lambda i: (-len(candidates[i]), i)):
        sentence = candidates[index]
        if not sentence or not _WORD.search(sentence):
            continue
        start = _find_quote(rest, sentence)
        if start >= 0:
            taken.append((index, sentence))
            rest = rest[:start] + _GAP + rest[start + len(sentence) :]
    if _ELLIPSIS in rest:
        free = set(range(len(candidates))) - {i for i, _ in taken}
        cut, rest = _cut_quotes(rest, candidates, free)
        taken.extend(cut)
    if not taken:
        return [], [text]
    previous = None
    while previous != rest:
        previous, rest = rest, _EMPTY_PAIR.sub(_GAP, rest)
    runs = (normalize_space(run) for run in rest.split(_GAP))
    return taken, [run for run in runs if _WORD.search(run)]


def grounded_vectors(
    texts: Sequence[str],
    candidates: Sequence[Sequence[int]],
    sentences: SentenceVectors | None,
    embedder: Embedder,
) -> np.ndarray:
    """One vector per text: derived from the sentences (rows of `sentences`) among its
    `candidates` that it quotes and its remaining words, or embedded whole when it quotes none."""
    texts = list(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    parts: list[tuple[int, int | None, str]] = []  # (text position, sentence row or None, words)
    whole: list[int] = []
    for position, text in enumerate(texts):
        rows = list(candidates[position]) if sentences is not None else []
        taken, runs = split_grounded_parts(text, [sentences.texts[r] for r in rows]) if rows else ([], [])
        if not taken:
            whole.append(position)
            continue
        parts.extend((position, rows[t], words) for t, words in taken)
        parts.extend((position, None, run) for run in runs)
    # one model call for everything still to embed: whole texts and remainders
    to_embed = list(dict.fromkeys([texts[p] for p in whole] + [w for _, row, w in parts if row is None]))
    embedded = dict(zip(to_embed, embedder.embed(to_embed))) if to_embed else {}
    dimension = next(iter(embedded.values())).shape[0] if embedded else sentences.vectors.shape[1]
    vectors = np.zeros((len(texts), dimension), dtype=np.float32)
    for position in whole:
        vectors[position] = embedded[texts[position]]
    if parts:
        matrix = np.stack([sentences.vectors[row] if row is not None else embedded[w] for _, row, w in parts])
        groups = [str(p) for p in range(len(texts))]
        means, _ = group_means(
            groups, [str(p) for p, _, _ in parts], matrix, [max(count_tokens(w), 1) for _, _, w in parts]
        )
        derived = sorted({p for p, _, _ in parts})
        vectors[derived] = means[derived]
    return vectors
