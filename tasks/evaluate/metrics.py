"""Benchmark metrics: evidence recall against gold sections, multiple-choice accuracy,
ROUGE-1/2/L F1 against the best of the reference answers, and latency percentiles."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import pandas as pd

from schemas.ids import safe_doc_id
from tasks.evaluate.gold_mapping import SectionLookup, map_gold

METRICS = (
    "evidence_recall",
    "mcq_accuracy",
    "rouge_1_f1",
    "rouge_2_f1",
    "rouge_l_f1",
    "latency_ms_p50",
    "latency_ms_p95",
)
ROUGE_METRICS = ("rouge_1_f1", "rouge_2_f1", "rouge_l_f1")


@dataclass(frozen=True)
class Question:
    qid: str
    doc_id: str
    question: str
    answer: str
    options: list[str] | None
    gold_option: int | None
    qtype: str | None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> "Question":
        options = record.get("options") or None
        return cls(
            qid=str(record["qid"]),
            # The id the document got at ingest ("tale-of-mrs.tittlemouse" is stored with its dot
            # replaced and a hash suffix): a question names its document as the user wrote it.
            doc_id=safe_doc_id(str(record["doc_id"])),
            question=str(record["question"]),
            answer=str(record.get("answer") or ""),
            options=[str(o) for o in options] if options else None,
            gold_option=record.get("gold_option"),
            qtype=record.get("qtype"),
            meta=record.get("meta") or {},
        )

    @property
    def references(self) -> list[str]:
        """Every reference answer: FairytaleQA's `answers`, SQuALITY's four written `references`,
        else the one `answer`. Read by scoring only; answering never sees them."""
        for key in ("answers", "references"):
            answers = self.meta.get(key)
            refs = [str(a) for a in answers if a] if isinstance(answers, list) and answers else []
            if refs:
                return refs
        return [self.answer] if self.answer else []


def rouge_tokens(text: str) -> list[str]:
    """Lower-cased words; each CJK character is its own token."""
    return re.findall(r"[\u4e00-\u9fff]|[a-z0-9]+", text.lower())


def _f1(overlap: int, n_candidate: int, n_reference: int) -> float:
    if overlap == 0 or n_candidate == 0 or n_reference == 0:
        return 0.0
    precision, recall = overlap / n_candidate, overlap / n_reference
    return 2 * precision * recall / (precision + recall)


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Bit-parallel (Allison and Dix): one big-integer step per token of `b`, so a 500-word answer
    against four 500-word references costs milliseconds where the quadratic table cost seconds."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for token in b:
        matched = row & masks.get(token, 0)
        row = ((row + matched) | (row - matched)) & full
    return len(a) - bin(row).count("1")


def rouge_l_f1(candidate: str, reference: str) -> float:
    """ROUGE-L F1 (longest common subsequence of tokens)."""
    a, b = rouge_tokens(candidate), rouge_tokens(reference)
    return _f1(lcs_length(a, b), len(a), len(b))


def rouge_n_f1(candidate: str, reference: str, n: int) -> float:
    """ROUGE-N F1: clipped overlap of token n-grams."""
    a, b = rouge_tokens(candidate), rouge_tokens(reference)
    grams_a = Counter(tuple(a[i : i + n]) for i in range(len(a) - n + 1))
    grams_b = Counter(tuple(b[i : i + n]) for i in range(len(b) - n + 1))
    overlap = sum((grams_a & grams_b).values())
    return _f1(overlap, sum(grams_a.values()), sum(grams_b.values()))


def best_rouge(candidate: str, references: Iterable[str]) -> float | None:
    """ROUGE-L F1 against the best-matching reference (None without references)."""
    scores = [rouge_l_f1(candidate, ref) for ref in references if ref]
    return max(scores) if scores else None


def best_rouges(candidate: str, references: Iterable[str]) -> dict[str, float | None]:
    """ROUGE-1, -2 and -L F1, each against its best-matching reference (the usual multi-reference
    reading: a long answer may follow one writer's wording for bigrams and another's order)."""
    refs = [ref for ref in references if ref]
    if not refs:
        return dict.fromkeys(ROUGE_METRICS)
    return {
        "rouge_1_f1": max(rouge_n_f1(candidate, ref, 1) for ref in refs),
        "rouge_2_f1": max(rouge_n_f1(candidate, ref, 2) for ref in refs),
        "rouge_l_f1": max(rouge_l_f1(candidate, ref) for ref in refs),
    }


def gold_section_ids(question: Question, sections: pd.DataFrame) -> list[str]:
    """Section ids holding the gold evidence: STAGE `related_scenes` (scene titles, mapped by
    heading, scene number, then text overlap) or FairytaleQA `cor_section` (1-based section
    numbers); [] when the question has none. `map_gold` also says what could not be mapped."""
    return map_gold(question.meta, SectionLookup(sections)).section_ids


def evidence_recall(gold: list[str], evidence: list[str]) -> float | None:
    if not gold:
        return None
    return len(set(gold) & set(evidence)) / len(set(gold))


def summarize(rows: pd.DataFrame) -> dict[str, float | None]:
    """The metric dictionary over answered rows (None where a metric does not apply)."""
    answered = rows[rows["status"] == "answered"]

    def mean(column: str) -> float | None:
        values = answered[column].dropna()
        return round(float(values.astype(float).mean()), 4) if len(values) else None

    latency = answered["latency_ms"].dropna().astype(float).to_numpy()
    return {
        "evidence_recall": mean("evidence_recall"),
        "mcq_accuracy": mean("is_correct_option"),
        **{metric: mean(metric) if metric in answered else None for metric in ROUGE_METRICS},
        "latency_ms_p50": round(float(np.percentile(latency, 50)), 2) if latency.size else None,
        "latency_ms_p95": round(float(np.percentile(latency, 95)), 2) if latency.size else None,
    }


def metric_rows(run_id: str, benchmark: str, system: str, rows: pd.DataFrame) -> list[dict[str, Any]]:
    """`eval_metrics` rows: the whole benchmark (qtype '*') and each qtype."""
    out = []
    groups = [("*", rows)] + [(str(q), g) for q, g in rows.groupby(rows["qtype"].fillna("(none)"))]
    for qtype, group in groups:
        n = int((group["status"] == "answered").sum())
        for metric, value in summarize(group).items():
            out.append(
                {
                    "run_id": run_id,
                    "benchmark": benchmark,
                    "system": system,
                    "qtype": qtype,
                    "metric": metric,
                    "value": value,
                    "n": n,
                }
            )
    return out
