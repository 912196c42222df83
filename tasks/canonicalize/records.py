"""Entity records as canonicalize_entities' merge requests show them: one line per entity with
its label, name, type, other names (case variants of the name dropped), the first words of its
description and a few mentions in context (overlapping windows of one chunk shown once); and
the open pairs of a document grouped into requests (`merge_requests`, also used by the dry run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from schemas.config import CanonicalizeEntitiesSettings
from tasks.llm.requests.grouped import order_by_shared
from tasks.llm.requests.records import distinct_names, first_sentences, merged_windows
from tasks.llm.requests.request_groups import stable_groups
from tasks.tables.io import as_list
from tasks.text import count_tokens

SAMPLE_MENTIONS = 3  # context windows shown per entity
SAMPLE_CONTEXT = 45  # characters either side of a mention
DESCRIPTION_WORDS = 40


def mention_samples(
    mentions: pd.DataFrame, chunk_text: dict[str, tuple[int, str]], limit: int = SAMPLE_MENTIONS
) -> list[str]:
    """Up to `limit` context windows around an entity's first mentions, in text order; windows that
    overlap within a chunk are merged into one."""
    spans = zip(mentions["chunk_id"], mentions["char_start"], mentions["char_end"])
    return span_samples(list(spans), chunk_text, limit)


def span_samples(
    spans: list[tuple[str, int, int]], chunk_text: dict[str, tuple[int, str]], limit: int = SAMPLE_MENTIONS
) -> list[str]:
    """`mention_samples` of an entity's mentions given as (chunk id, char_start, char_end), in order."""
    by_chunk: dict[str, list[tuple[int, int]]] = {}
    for chunk_id, char_start, char_end in spans:
        if chunk_id in chunk_text:
            start = chunk_text[chunk_id][0]
            by_chunk.setdefault(chunk_id, []).append((int(char_start) - start, int(char_end) - start))
    samples: list[str] = []
    for chunk_id, spans in by_chunk.items():
        text = chunk_text[chunk_id][1]
        for left, right in merged_windows(spans, len(text), SAMPLE_CONTEXT):
            if len(samples) < limit:
                samples.append("…" + " ".join(text[left:right].split()) + "…")
    return samples


def entity_record(raw: dict[str, Any], samples: list[str]) -> str:
    """One entity on one line (the request puts its label before it):
    `Nadia (character; also: Sophia): <description> | "…mention…" | "…mention…"`."""
    name = " ".join(str(raw["name"]).split())
    others = distinct_names(name, as_list(raw["surfaces"]))
    kind = str(raw["entity_type"]) + (f"; also: {', '.join(others)}" if others else "")
    description = first_sentences(str(raw["description"] or ""), DESCRIPTION_WORDS) or "-"
    quoted = "".join(f' | "{s}"' for s in samples) or " | (no mentions)"
    return f"{name} ({kind}): {description}{quoted}"


@dataclass(frozen=True)
class MergeRequests:
    """The open pairs of one document grouped into requests, each entity record written once."""

    pairs: dict[str, tuple[str, str]]  # "left|right" -> (left, right)
    described: dict[str, str]  # raw entity id -> its record line (without the label)
    groups: list[list[str]]

    def values(self, ids: list[str], title: str, language: str) -> dict[str, str]:
        """Prompt values of one request: its records labelled R1.. in first-shown order, then its pairs."""
        shown = list(dict.fromkeys(r for i in ids for r in self.pairs[i]))
        label = {raw_id: f"R{n}" for n, raw_id in enumerate(shown, 1)}
        return {
            "title": title,
            "language": language,
            "records": "\n".join(f"{label[r]} {self.described[r]}" for r in shown),
            "pairs": "\n".join(
                f"{n}. {label[self.pairs[i][0]]} and {label[self.pairs[i][1]]}" for n, i in enumerate(ids, 1)
            ),
        }


def merge_requests(
    undecided: list[tuple[str, str, float]],
    raw_entities: pd.DataFrame,
    raw_mentions: pd.DataFrame,
    chunks: pd.DataFrame,
    settings: CanonicalizeEntitiesSettings,
) -> MergeRequests:
    """Open pairs ordered so pairs sharing an entity are neighbours, grouped while the records
    they show fit `pack_tokens` (each record counted once per request), with content-defined
    boundaries."""
    asked = {r for a, b, _ in undecided for r in (a, b)}
    records = raw_entities[raw_entities["raw_entity_id"].isin(asked)].set_index("raw_entity_id")
    chunk_text = {c.chunk_id: (int(c.char_start), c.text) for c in chunks.itertuples()}
    mentions = raw_mentions[raw_mentions["raw_entity_id"].isin(asked)].sort_values("char_start")
    spans: dict[str, list[tuple[str, int, int]]] = {}  # per entity, in the sorted order
    columns = ("raw_entity_id", "chunk_id", "char_start", "char_end")
    for raw_id, chunk_id, char_start, char_end in zip(*(mentions[c] for c in columns)):
        spans.setdefault(raw_id, []).append((chunk_id, char_start, char_end))
    described = {
        raw_id: entity_record(row, span_samples(spans.get(raw_id, []), chunk_text))
        for raw_id, row in records.to_dict("index").items()
    }
    pairs = {f"{a}|{b}": (a, b) for a, b, _ in undecided}
    cost = {raw_id: count_tokens(text) + 2 for raw_id, text in described.items()}  # + its label
    # Keyed by the pair (its ids hash the names), so the content-defined boundaries
    # (tasks.llm.requests.request_groups) stay put when another scene is edited.
    items = [(key, key, pair) for key, pair in order_by_shared(list(pairs.items()))]
    groups = stable_groups(items, cost, settings.pack_tokens, settings.max_pairs_per_request)
    return MergeRequests(pairs, described, groups)
