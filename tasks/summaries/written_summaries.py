"""summarize_hierarchy with an LLM: the summaries of the configured levels (by default the whole work,
the storylines and the communities) written by the model from their extractive quotes, several
summaries per request (`SHAPES["summarize_hierarchy"]`). A request shows its summaries' quotes once
each, numbered Q1, Q2 ... in story order under the heading of their scene (once per run of quotes
from one scene), then each summary with the numbers of its own quotes (the whole work and a
storyline or a community often quote the same sentences). Each written sentence names the quotes
it rests on, and becomes a `summary_claims` row pointing to those sentences. A number the request
does not show is dropped, and a sentence left with none is not kept: every claim points to its
sources. A summary whose reply failed, or kept no sentence, stays
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

    def pool(self, ids: list[str]) -> list[dict[str, Any]]:
        """The quotes of a request's summaries, each once, in story order: the whole work's quotes
        and a storyline's or a community's are often the same sentences."""
        unique: dict[str, dict[str, Any]] = {}
        for summary_id in ids:
            for quote in self.quotes[summary_id]:
                unique.setdefault(quote["sentence_id"], quote)
        return sorted(unique.values(), key=lambda q: (q["char_start"], q["sentence_id"]))

    def numbered(self, summary_id: str, ids: list[str]) -> dict[int, dict[str, Any]]:
        """The request's quote numbers a reply about `summary_id` may cite: every quote the request
        shows (each is a sentence of the source)."""
        return dict(enumerate(self.pool(ids), start=1))

    def values(self, ids: list[str], title: str, language: str, words: int) -> dict[str, Any]:
        pool = self.pool(ids)
        number_of = {quote["sentence_id"]: n for n, quote in enumerate(pool, start=1)}
        lines: list[str] = []
        scene = None
        for n, quote in enumerate(pool, start=1):
            if quote["section_id"] != scene:  # the heading once per run of quotes from one scene
                scene = quote["section_id"]
                lines.append(self.headings.get(scene) or "[?]")
            lines.append(f"Q{n} {normalize_space(quote['text'])}")
        items = []
        for n, summary_id in enumerate(ids, start=1):
            row = self.rows[summary_id]
            kind = LEVEL_NAMES.get(language, LEVEL_NAMES["en"])[row["level"]]
            own = sorted(number_of[q["sentence_id"]] for q in self.quotes[summary_id])
            items.append(f"{n}. {kind}: {row['title']} ({quote_ranges(own)})")
        quotes, listed = "\n".join(lines), "\n".join(items)
        return {"document_title": title, "quotes": quotes, "items": listed, "words": words}


def quote_ranges(numbers: list[int]) -> str:
    """Quote numbers as runs: "Q1-Q4, Q7, Q9-Q10"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"Q{a}" if a == b else f"Q{a}-Q{b}" for a, b in runs)


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
    summary_id: str, doc_id: str, reply: Any, numbered: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    """`summary_claims` rows of one reply: each sentence with the quotes it names that exist."""
    claims = []
    for sentence in reply.sentences:
        cited = [numbered[n] for n in dict.fromkeys(sentence.quotes) if n in numbered]
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
        asked = list(batch.asked_with.get(summary_id) or (summary_id,))
        written = claim_rows(summary_id, doc.doc_id, reply, plan.numbered(summary_id, asked))
        if not written:
            failures.append(failure_row(ctx, summary_id, "the written summary cites none of its quotes"))
            continue
        text = joiner.join(c["text"] for c in written)
        row.update(text=text, n_words=count_words(text, doc.language), method="llm")
        claims.extend(written)
    return {"summary_claims": claims, "failures": failures, "llm_calls": batch.calls}
