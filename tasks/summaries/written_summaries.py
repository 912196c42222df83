"""summarize_hierarchy with an LLM: the summaries of the configured levels (by default the whole work,
the storylines and the communities) written by the model from their extractive quotes, several
summaries per request (`SHAPES["summarize_hierarchy"]`). Each item shows its quotes numbered Q1, Q2 ...
in story order, under the heading of their scene (once per run of quotes from one scene); each
written sentence names the quotes it rests on, and becomes a `summary_claims` row pointing to those
sentences. A number outside the item's quotes is dropped, and a sentence left with none is not
kept: every claim points to its sources. A summary whose reply failed, or kept no sentence, stays
extractive and is a failures row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tasks.llm.requests.grouped import group_items, run_grouped
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext, StageOutput, failure_row
from tasks.text import count_tokens, count_words, normalize_space

LEVEL_NAMES = {
    "en": {
        "work": "the whole work",
        "storyline": "storyline",
        "community": "community",
        "episode": "episode",
    },
    "zh": {"work": "整部作品", "storyline": "故事线", "community": "群落", "episode": "情节"},
}
LEVEL_ORDER = ("work", "storyline", "community", "episode")


@dataclass(frozen=True)
class WritingPlan:
    """The summaries to write, their quotes and scenes, and the request groups."""

    rows: dict[str, dict[str, Any]]  # summary id -> its `summaries` row
    quotes: dict[str, list[dict[str, Any]]]  # summary id -> its quote rows in story order
    headings: dict[str, str]  # section id -> "[ordinal] heading"
    groups: list[list[str]]

    def item(self, number: int, summary_id: str, language: str) -> str:
        row = self.rows[summary_id]
        kind = LEVEL_NAMES.get(language, LEVEL_NAMES["en"])[row["level"]]
        lines = [f"{number}. {kind}: {row['title']}"]
        scene = None
        for position, quote in enumerate(self.quotes[summary_id], start=1):
            # The heading once per run of quotes from one scene: repeated on every quote it cost
            # as many tokens as the quotes themselves.
            if quote["section_id"] != scene:
                scene = quote["section_id"]
                lines.append(self.headings.get(scene) or "[?]")
            lines.append(f"Q{position} {normalize_space(quote['text'])}")
        return "\n".join(lines)

    def values(self, ids: list[str], title: str, language: str, words: int) -> dict[str, Any]:
        items = "\n\n".join(self.item(n, summary_id, language) for n, summary_id in enumerate(ids, 1))
        return {"document_title": title, "items": items, "words": words}


def writing_plan(
    rows: list[dict[str, Any]],
    quotes: list[dict[str, Any]],
    section_headings: dict[str, str],
    levels: list[str],
    pack_tokens: int,
    max_per_request: int,
) -> WritingPlan:
    """The summaries of `levels` in level order (work, storylines, communities, episodes), grouped
    while their quotes fit `pack_tokens`."""
    chosen = sorted(
        (r for r in rows if r["level"] in levels),
        key=lambda r: (LEVEL_ORDER.index(r["level"]), r["ordinal"], r["summary_id"]),
    )
    by_summary: dict[str, list[dict[str, Any]]] = {}
    for quote in sorted(quotes, key=lambda q: (q["summary_id"], q["position"])):
        by_summary.setdefault(quote["summary_id"], []).append(quote)
    ids = [r["summary_id"] for r in chosen]
    costs = [sum(count_tokens(q["text"]) for q in by_summary.get(i, [])) for i in ids]
    return WritingPlan(
        rows={r["summary_id"]: r for r in chosen},
        quotes={i: by_summary.get(i, []) for i in ids},
        headings=section_headings,
        groups=group_items(ids, costs, pack_tokens, max_per_request) if ids else [],
    )


def claim_rows(
    summary_id: str, doc_id: str, reply: Any, quotes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`summary_claims` rows of one reply: each sentence with the quotes it names that exist."""
    claims = []
    for sentence in reply.sentences:
        cited = [quotes[n - 1] for n in dict.fromkeys(sentence.quotes) if 1 <= n <= len(quotes)]
        text = normalize_space(sentence.text)
        if not cited or not text:
            continue  # a claim without a source is not kept
        claims.append(
            {
                "summary_id": summary_id,
                "doc_id": doc_id,
                "position": len(claims) + 1,
                "text": text,
                "sentence_ids": [q["sentence_id"] for q in cited],
                "section_ids": list(dict.fromkeys(q["section_id"] for q in cited)),
                "method": "llm",
            }
        )
    return claims


def write_summaries(
    ctx: StageContext,
    rows: list[dict[str, Any]],
    quotes: list[dict[str, Any]],
    section_headings: dict[str, str],
) -> StageOutput:
    """Ask the model to write the configured levels' summaries; updates their `rows` in place (text,
    words, method 'llm') and returns the claims, failures and calls."""
    settings = ctx.settings.summarize_hierarchy
    doc = ctx.document
    plan = writing_plan(
        rows,
        quotes,
        section_headings,
        list(settings.llm_levels),
        settings.pack_tokens,
        settings.max_per_request,
    )
    if not plan.groups:
        return {"summary_claims": [], "failures": [], "llm_calls": []}
    batch = run_grouped(
        ctx,
        SHAPES["summarize_hierarchy"],
        plan.groups,
        lambda ids: plan.values(ids, doc.title, doc.language, settings.work_words),
    )
    claims: list[dict[str, Any]] = []
    failures = list(batch.failures)
    joiner = "" if doc.language == "zh" else " "
    for summary_id, row in plan.rows.items():
        reply = batch.values.get(summary_id)
        if reply is None:
            continue  # its failures row came with the batch
        written = claim_rows(summary_id, doc.doc_id, reply, plan.quotes[summary_id])
        if not written:
            failures.append(failure_row(ctx, summary_id, "the written summary cites none of its quotes"))
            continue
        text = joiner.join(c["text"] for c in written)
        row.update(text=text, n_words=count_words(text, doc.language), method="llm")
        claims.extend(written)
    return {"summary_claims": claims, "failures": failures, "llm_calls": batch.calls}
