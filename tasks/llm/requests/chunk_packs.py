"""Consecutive short chunks (scenes) packed into one extraction request up to a token budget:
the instructions go once for several scenes instead of once per scene. Each stage that packs
chunks (graph, narrative, combined) splits the reply back per chunk itself, so provenance stays
per chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tasks.llm.requests.request_groups import is_cut

CUT_BUDGETS = 2  # budgets of tokens between content-defined pack boundaries, on average


@dataclass(frozen=True)
class Member:
    chunk_id: str
    start: int
    text: str


@dataclass(frozen=True)
class Pack:
    item_id: str  # the first chunk's id: a failed pack is a failures row for it
    start: int
    text: str  # the document span from the first chunk's start to the last chunk's end
    members: tuple[Member, ...]


def ends_pack(text: str, tokens: int, budget: int) -> bool:
    """A content-defined pack boundary after a chunk: decided by a hash of the chunk's own text
    (`request_groups.is_cut`), on average once per `CUT_BUDGETS` budgets of tokens. Filling packs up to
    the budget alone moves every later boundary when one chunk grows, and every later request then
    misses the LLM cache; after such a cut the packs start again whatever came before."""
    return budget > 0 and is_cut(text, tokens / (CUT_BUDGETS * budget))


def pack_chunks(chunks: list[Any], document_text: str, budget: int) -> list[Pack]:
    """Consecutive chunks (rows with chunk_id, char_start, char_end, n_tokens, text, in order)
    grouped while their tokens fit `budget`, a pack also ending after a chunk that `ends_pack`;
    budget 0 keeps one chunk per request."""
    groups: list[list[Any]] = []
    used = 0
    cut = False
    for chunk in chunks:
        tokens = int(chunk.n_tokens)
        if not groups or budget <= 0 or cut or used + tokens > budget:
            groups.append([])
            used = 0
        groups[-1].append(chunk)
        used += tokens
        cut = ends_pack(str(chunk.text), tokens, budget)
    packs = []
    for group in groups:
        start, end = int(group[0].char_start), int(group[-1].char_end)
        members = tuple(Member(c.chunk_id, int(c.char_start), c.text) for c in group)
        text = group[0].text if len(group) == 1 else document_text[start:end]
        packs.append(Pack(group[0].chunk_id, start, text, members))
    return packs
