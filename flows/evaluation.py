"""Evaluate a system on a question file: answer every question, score it, write
`qa_answers`, `qa_traces` and `eval_metrics`, and report per benchmark and per qtype.

`evaluate` is plain Python; the `evaluate_benchmark` Prefect flow maps it over documents
for scheduled and parallel evaluation runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from flows.answer_questions import QueryEngine, warm_up
from schemas.config import Settings
from tasks.query.answer_types import Answer
from tasks.query.store.doc_index import DocumentNotBuilt
from tasks.evaluate.gold_mapping import SectionLookup, gold_lines, gold_summary, gold_warning, map_gold
from tasks.evaluate.metrics import METRICS, Question, best_rouge, evidence_recall, metric_rows, summarize
from schemas.ids import sha256_bytes, stable_hash
from tasks.tables.io import Workspace, write_table


class QuestionFileError(ValueError):
    """A questions file that cannot be read."""


@dataclass
class EvalReport:
    run_id: str
    benchmark: str
    system: str
    rows: pd.DataFrame
    metrics: dict[str, float | None]
    by_qtype: dict[str, dict[str, float | None]]
    skipped_documents: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gold: dict[str, Any] = field(default_factory=dict)  # gold mapping: unmapped counts, recall per language
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        answered = int((self.rows["status"] == "answered").sum()) if not self.rows.empty else 0
        return {"system": self.system, "benchmark": self.benchmark, "run_id": self.run_id, "n_questions": answered,
                "offline": bool(self.rows["is_offline"].all()) if answered else True,
                "metrics": self.metrics, "by_qtype": self.by_qtype, "skipped_documents": self.skipped_documents,
                "notes": self.notes, "gold_mapping": self.gold, "warnings": self.warnings}


def load_questions(path: Path) -> list[Question]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionFileError(f"cannot read questions file {path}: {exc}") from None
    questions = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            questions.append(Question.from_json(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise QuestionFileError(f"{path.name} line {number}: not a question record ({type(exc).__name__}: {exc})") from None
    if not questions:
        raise QuestionFileError(f"{path} has no questions")
    return questions


def benchmark_name(path: Path) -> str:
    return path.parent.name if path.stem == "questions" else path.stem.replace(".questions", "")


def answer_row(run_id: str, benchmark: str, question: Question, sample: int, answer: Answer | None,
               gold: list[str], status: str, language: str | None = None,
               gold_unmapped: list[str] | None = None) -> dict[str, Any]:
    """One `qa_answers` row; a question whose gold could not all be mapped gets no evidence recall."""
    gold_unmapped = list(gold_unmapped or [])
    base = {"run_id": run_id, "benchmark": benchmark, "qid": question.qid, "doc_id": question.doc_id,
            "system": answer.system if answer else "", "sample": sample, "qtype": question.qtype,
            "question": question.question, "reference": question.answer, "gold_option": question.gold_option,
            "gold_section_ids": gold, "status": status,
            "language": language or question.meta.get("language"), "gold_unmapped": gold_unmapped}
    if answer is None:
        return {**base, "answer": None, "is_offline": None, "chosen_option": None, "is_correct_option": None,
                "rouge_l_f1": None, "evidence_section_ids": [], "evidence_recall": None, "evidence_tokens": None,
                "cited_headings": [], "latency_ms": None, "board_json": None, "skills": [], "tool_calls": None}
    is_correct = None
    if question.options and question.gold_option is not None:
        is_correct = answer.chosen_option == question.gold_option
    return {**base, "answer": answer.answer, "is_offline": answer.is_offline, "chosen_option": answer.chosen_option,
            "is_correct_option": is_correct, "rouge_l_f1": best_rouge(answer.answer, question.references),
            "evidence_section_ids": answer.evidence_section_ids,
            "evidence_recall": None if gold_unmapped else evidence_recall(gold, answer.evidence_section_ids),
            "evidence_tokens": answer.evidence_tokens, "cited_headings": [c.heading for c in answer.citations],
            "latency_ms": answer.latency_ms, "board_json": json.dumps(answer.board, sort_keys=True) if answer.board else None,
            "skills": list(answer.skills), "tool_calls": len(answer.trace)}


def trace_rows(run_id: str, qid: str, sample: int, answer: Answer) -> list[dict[str, Any]]:
    return [{"run_id": run_id, "qid": qid, "sample": sample, "call_index": i, "round": int(call.get("round", 0)),
             "tool": call["tool"], "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False, sort_keys=True),
             "rows": call.get("rows"), "tokens": call.get("tokens"), "ms": call.get("ms")}
            for i, call in enumerate(answer.trace)]


def answer_document(engine: QueryEngine, run_id: str, benchmark: str, doc_id: str, questions: list[Question],
                    system: str, samples: int) -> dict[str, list[dict]]:
    """Answer one document's questions; a missing document marks its questions, never raises."""
    out: dict[str, list[dict]] = {"qa_answers": [], "qa_traces": [], "llm_calls": [], "failures": []}
    try:
        warm_up(engine, doc_id)
        index = engine.index(doc_id)
    except DocumentNotBuilt:
        out["qa_answers"] = [answer_row(run_id, benchmark, q, s, None, [], "document_missing")
                             for q in questions for s in range(samples)]
        return out
    lookup = SectionLookup(index.sections)
    for question in questions:
        mapping = map_gold(question.meta, lookup)
        for sample in range(samples):
            answer = engine.ask(doc_id, question.question, question.options, system, sample=sample)
            out["qa_answers"].append(answer_row(run_id, benchmark, question, sample, answer,
                                                mapping.section_ids, "answered", index.language,
                                                mapping.unmapped))
            out["qa_traces"].extend(trace_rows(run_id, question.qid, sample, answer))
            out["llm_calls"].extend({**row, "doc_id": doc_id} for row in answer.llm_calls)
            out["failures"].extend({**row, "doc_id": doc_id} for row in answer.failures)
    if engine.progress is not None:
        engine.progress(f"{doc_id}: {len(questions)} question(s) answered with {system}")
    return out


def evaluation_run_id(questions_path: Path, system: str, settings: Settings, limit: int | None, samples: int) -> str:
    content = sha256_bytes(questions_path.read_bytes())
    return f"run_{stable_hash('eval', content, system, settings.model_dump(mode='json'), limit, samples)}"


def evaluate(workspace: Workspace, questions_path: Path, settings: Settings, *, system: str = "nkw",
             limit: int | None = None, samples: int = 1, benchmark: str | None = None, engine: QueryEngine | None = None,
             map_documents: Callable[..., list[dict[str, list[dict]]]] | None = None) -> EvalReport:
    questions = load_questions(questions_path)[: limit or None]
    benchmark = benchmark or benchmark_name(questions_path)
    run_id = evaluation_run_id(questions_path, system, settings, limit, samples)
    engine = engine or QueryEngine(workspace, settings)
    by_doc: dict[str, list[Question]] = {}
    for question in questions:
        by_doc.setdefault(question.doc_id, []).append(question)
    jobs = [(doc_id, qs) for doc_id, qs in by_doc.items()]
    if map_documents is None:
        results = [answer_document(engine, run_id, benchmark, d, qs, system, samples) for d, qs in jobs]
    else:
        results = map_documents(engine, run_id, benchmark, jobs, system, samples)
    frame = pd.DataFrame([row for result in results for row in result["qa_answers"]])
    write_table(workspace, "qa_answers", frame, run_id)
    write_table(workspace, "qa_traces", [row for result in results for row in result["qa_traces"]], run_id)
    for (doc_id, _), result in zip(jobs, results):
        # LLM accounting of query time lands beside the build's, one partition per run and document.
        if result["llm_calls"] or result["failures"]:
            write_table(workspace, "llm_calls", result["llm_calls"], doc_id, f"answer-{run_id}")
            write_table(workspace, "failures", result["failures"], doc_id, f"answer-{run_id}")
    metrics = metric_rows(run_id, benchmark, system, frame)
    write_table(workspace, "eval_metrics", metrics, run_id)
    by_qtype = {q: summarize(g) for q, g in frame.groupby(frame["qtype"].fillna("(none)"))} if frame["qtype"].notna().any() else {}
    missing = sorted(frame.loc[frame["status"] == "document_missing", "doc_id"].unique().tolist())
    notes = []
    if frame["is_offline"].fillna(True).all():
        notes.append("offline: answers are extractive (no LLM); ROUGE-L is against the reference text")
    if samples > 1 and frame["is_offline"].fillna(True).all():
        notes.append("offline answers are deterministic: every sample of a question is identical")
    gold = gold_summary(frame)
    warnings = [w for w in [gold_warning(benchmark, gold)] if w]
    return EvalReport(run_id, benchmark, system, frame, summarize(frame), by_qtype, missing, notes, gold,
                      warnings)


def format_report(report: EvalReport, verbose: bool = False) -> str:
    """A plain-text table: the benchmark row, then one row per qtype; then evidence recall per
    language with the unmapped gold beside it (`verbose` lists the unmapped questions)."""
    header = f"{'qtype':<34} {'n':>4} " + " ".join(f"{m:>15}" for m in METRICS)
    lines = [f"benchmark {report.benchmark}  system {report.system}  run {report.run_id}", header, "-" * len(header)]

    def row(name: str, metrics: dict[str, float | None], n: int) -> str:
        cells = " ".join(f"{'—' if metrics[m] is None else format(metrics[m], '.4g'):>15}" for m in METRICS)
        return f"{name[:34]:<34} {n:>4} {cells}"

    answered = report.rows[report.rows["status"] == "answered"]
    lines.append(row("ALL", report.metrics, len(answered)))
    for qtype, metrics in sorted(report.by_qtype.items()):
        lines.append(row(qtype, metrics, int((answered["qtype"].fillna("(none)") == qtype).sum())))
    if report.skipped_documents:
        lines.append(f"not in workspace (questions skipped): {', '.join(report.skipped_documents)}")
    lines.extend(gold_lines(report.gold, verbose) if report.gold else [])
    lines.extend(f"warning: {warning}" for warning in report.warnings)
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)


def evaluate_with_prefect(workspace: Workspace, questions_path: Path, settings: Settings, **options: Any) -> EvalReport:
    """`evaluate` with documents mapped as Prefect task runs (batch and scheduled runs)."""
    from flows.evaluate_benchmark import map_documents_with_prefect

    return evaluate(workspace, questions_path, settings, map_documents=map_documents_with_prefect, **options)


