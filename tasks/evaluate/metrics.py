"""Benchmark metrics: evidence recall against gold sections, multiple-choice accuracy,
ROUGE-L F1 against reference answers, and latency percentiles."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import pandas as pd

from schemas.ids import safe_doc_id
from tasks.evaluate.gold_mapping import SectionLookup, map_gold

METRICS = ("evidence_recall", "mcq_accuracy", "rouge_l_f1", "latency_ms_p50", "latency_ms_p95")


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
        answers = self.meta.get("answers")
        refs = [str(a) for a in answers if a] if isinstance(answers, list) and answers else []
        return refs or ([self.answer] if self.answer else [])


def rouge_tokens(text: str) -> list[str]:
    """Lower-cased words; each CJK character is its own token."""
    return re.findall(r"[\u4e00-\u9fff]|[a-z0-9]+", text.lower())


def rouge_l_f1(candidate: str, reference: str) -> float:
    """ROUGE-L F1 (longest common subsequence of tokens)."""
    a, b = rouge_tokens(candidate), rouge_tokens(reference)
    if not a or not b:
        return 0.0
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0]
        for j, other in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if token == other else max(previous[j], current[j - 1]))
        previous = current
    lcs = previous[-1]
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(a), lcs / len(b)
    return 2 * precision * recall / (precision + recall)


def best_rouge(candidate: str, references: Iterable[str]) -> float | None:
    scores = [rouge_l_f1(candidate, ref) for ref in references if ref]
    return max(scores) if scores else None


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
        "rouge_l_f1": mean("rouge_l_f1"),
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
