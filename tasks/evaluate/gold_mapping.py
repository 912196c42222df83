"""Map a question's gold scenes to the document's sections, and say which could not be mapped.

STAGE names gold scenes by their titles (`meta.related_scenes`, ';'-separated). A title maps to
sections by, in order:
1. heading: the section heading equals the title (whitespace and case aside);
2. scene number: the title's number ("12、…", "第12场", "十二、…") equals a section's scene number
   (among several, the one whose heading shares most with the title);
3. text overlap: the title line appears in a section's text (e.g. inside a paragraph group), else
   the section heading sharing most of the title's characters/words (at least half).
FairytaleQA names them by 1-based section number (`meta.cor_section`).

A reference to the whole work ("whole film", "全片") names no scene: it is not scene gold, so
such a question has no gold sections (like one without `related_scenes`).

A question whose gold references do not all map is "unmapped": it is left out of evidence
recall, and reported, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tasks.ingest.scene_headings import zh_number

MIN_OVERLAP = 0.5
WHOLE_WORK = frozenset(
    {"whole film", "whole movie", "entire film", "whole script", "全片", "全剧", "整部电影"}
)
_TITLE_NUMBER = re.compile(
    r"^\s*(?:第\s*)?(?P<n>\d+|[零〇一二两三四五六七八九十百千]+)\s*(?:[场場幕]|[、.．:)）\s])"
)


@dataclass(frozen=True)
class GoldMapping:
    section_ids: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)  # the gold as the question gives it
    unmapped: list[str] = field(default_factory=list)  # references no section was found for
    methods: dict[str, str] = field(default_factory=dict)  # reference -> heading | number | overlap | ordinal

    @property
    def has_gold(self) -> bool:
        return bool(self.references)

    @property
    def is_mapped(self) -> bool:
        """Every gold reference found a section (questions without gold are neither)."""
        return self.has_gold and not self.unmapped


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", str(text).replace("\u00a0", " ").replace("\u3000", " ")).strip().lower()


def title_number(title: str) -> str | None:
    match = _TITLE_NUMBER.match(title.replace("\u00a0", " "))
    if not match:
        return None
    value = zh_number(match.group("n"))
    return str(value) if value is not None else None


def _tokens(text: str) -> set[str]:
    text = norm(text)
    text = re.sub(
        r"^\s*(?:第\s*)?(?:\d+|[零〇一二两三四五六七八九十百千]+)\s*(?:[场場幕]|[、.．:)）]|\s)", "", text
    )
    cjk = re.sub(r"[^\u4e00-\u9fff]", "", text)
    words = set(re.findall(r"[a-z0-9']+", text))
    return words | {cjk[i : i + 2] for i in range(len(cjk) - 1)} | (set(cjk) if len(cjk) == 1 else set())


def _overlap(a: str, b: str) -> float:
    ta, tb = _tokens(a), _tokens(b)
    return len(ta & tb) / len(ta) if ta else 0.0


class SectionLookup:
    """Sections of one document, indexed once for mapping every question's gold."""

    def __init__(self, sections: pd.DataFrame):
        self.rows = [r for r in sections.to_dict("records") if r.get("section_kind") != "preamble"]
        self.by_heading: dict[str, list[str]] = {}
        self.by_number: dict[str, list[dict[str, Any]]] = {}
        self.by_ordinal = {int(r["ordinal"]): r["section_id"] for r in self.rows}
        for row in self.rows:
            self.by_heading.setdefault(norm(row["heading"]), []).append(row["section_id"])
            number = row.get("scene_number")
            if isinstance(number, str) and number:
                self.by_number.setdefault(number.lstrip("0") or "0", []).append(row)

    def title(self, title: str) -> tuple[list[str], str | None]:
        """(section ids, method) for one gold scene title; ([], None) when none is found."""
        found = self.by_heading.get(norm(title))
        if found:
            return found, "heading"
        number = title_number(title)
        if number is not None and (candidates := self.by_number.get(number.lstrip("0") or "0")):
            best = max(candidates, key=lambda r: _overlap(title, r["heading"]))
            return [best["section_id"]], "number"
        line = norm(title)
        containing = [r["section_id"] for r in self.rows if line and line in norm(r.get("text") or "")]
        if containing:
            return containing[:1], "overlap"
        scored = [(_overlap(title, r["heading"]), r["section_id"]) for r in self.rows]
        score, section_id = max(scored, default=(0.0, None))
        if section_id is not None and score >= MIN_OVERLAP:
            return [section_id], "overlap"
        return [], None

    def ordinal(self, number: int) -> str | None:
        return self.by_ordinal.get(number)


def map_gold(meta: dict[str, Any], lookup: SectionLookup) -> GoldMapping:
    """The sections holding a question's gold evidence, with what could not be mapped."""
    related = meta.get("related_scenes")
    if related:
        references = [t.strip() for t in str(related).split(";") if t.strip() and norm(t) not in WHOLE_WORK]
        ids: list[str] = []
        unmapped, methods = [], {}
        for reference in references:
            found, method = lookup.title(reference)
            if found:
                ids.extend(found)
                methods[reference] = method
            else:
                unmapped.append(reference)
        return GoldMapping(list(dict.fromkeys(ids)), references, unmapped, methods)
    cor = meta.get("cor_section")
    if cor:
        references = re.findall(r"\d+", str(cor))
        ids, unmapped = [], []
        for reference in references:
            section_id = lookup.ordinal(int(reference))
            (ids.append(section_id) if section_id else unmapped.append(reference))
        return GoldMapping(
            list(dict.fromkeys(ids)),
            references,
            unmapped,
            {r: "ordinal" for r in references if r not in unmapped},
        )
    return GoldMapping()


WARN_SHARE = 0.05  # above this share of questions with unmapped gold, an evaluation warns


def _has_gold(row: pd.Series) -> bool:
    return len(row["gold_section_ids"]) > 0 or len(row["gold_unmapped"]) > 0


def gold_summary(rows: pd.DataFrame) -> dict[str, Any]:
    """Per language: questions, questions with gold, how many have gold that could not be mapped,
    and evidence recall over the mapped ones; plus the list of unmapped questions."""
    if rows.empty:
        return {
            "with_gold": 0,
            "unmapped": 0,
            "unmapped_share": None,
            "by_language": {},
            "unmapped_questions": [],
        }
    rows = rows.assign(language=rows["language"].fillna("?"), has_gold=rows.apply(_has_gold, axis=1))
    questions = rows.drop_duplicates("qid")
    by_language: dict[str, dict[str, Any]] = {}
    for language, group in questions.groupby("language"):
        with_gold = group[group["has_gold"]]
        answered = (rows["language"] == language) & (rows["status"] == "answered")
        recalls = rows.loc[answered, "evidence_recall"].dropna()
        by_language[str(language)] = {
            "questions": int(len(group)),
            "with_gold": int(len(with_gold)),
            "unmapped": int((with_gold["gold_unmapped"].map(len) > 0).sum()),
            "evidence_recall": round(float(recalls.astype(float).mean()), 4) if len(recalls) else None,
            "n_recall": int(len(recalls)),
        }
    unmapped = questions[questions["gold_unmapped"].map(len) > 0]
    with_gold = int(questions["has_gold"].sum())
    return {
        "with_gold": with_gold,
        "unmapped": int(len(unmapped)),
        "unmapped_share": round(len(unmapped) / with_gold, 4) if with_gold else None,
        "by_language": by_language,
        "unmapped_questions": [
            {"qid": r.qid, "doc_id": r.doc_id, "language": r.language, "gold": list(r.gold_unmapped)}
            for r in unmapped.itertuples()
        ],
    }


def gold_warning(benchmark: str, summary: dict[str, Any]) -> str | None:
    share = summary.get("unmapped_share")
    if share is None or share <= WARN_SHARE:
        return None
    return (
        f"{benchmark}: {summary['unmapped']} of {summary['with_gold']} questions with gold ({share:.1%}) "
        "have "
        "gold scenes that match no section; they are left out of evidence recall (see --verbose)"
    )


def gold_lines(summary: dict[str, Any], verbose: bool = False) -> list[str]:
    """Plain-text lines: recall per language with the unmapped count beside it; with `verbose`,
    every unmapped question and the gold it names."""
    share = summary.get("unmapped_share")
    lines = [
        f"gold mapping: {summary['unmapped']} of {summary['with_gold']} question(s) with gold unmapped"
        + (f" ({share:.1%})" if share is not None else "")
    ]
    for language, figures in sorted(summary["by_language"].items()):
        recall = "—" if figures["evidence_recall"] is None else format(figures["evidence_recall"], ".4g")
        mapped = figures["with_gold"] - figures["unmapped"]
        lines.append(
            f"evidence recall [{language}] {recall:>7}  over {mapped} "
            f"mapped question(s); unmapped gold: {figures['unmapped']} of {figures['with_gold']}"
        )
    if verbose:
        for item in summary["unmapped_questions"]:
            lines.append(f"  unmapped {item['qid']} ({item['language']}): {'; '.join(item['gold'])[:160]}")
    return lines
