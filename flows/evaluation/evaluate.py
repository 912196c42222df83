"""Evaluate a system on a question file: answer every question, score it, write
`qa_answers`, `qa_traces` and `eval_metrics`, and report per benchmark and per qtype.

`evaluate` is plain Python; the `evaluate_benchmark` Prefect flow maps it over documents
for scheduled and parallel evaluation runs.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from flows.answer_questions import QueryEngine, warm_up
from flows.evaluation.answer_journal import AnswerJournal
from flows.evaluation.judging import judge_run
from flows.evaluation.question_budget import question_budget
from flows.evaluation.question_checks import build_gaps
from flows.evaluation.question_file import QuestionFileError, benchmark_name, check_documents, load_questions
from flows.evaluation.resume import clear_checkpoints, load_checkpoint, save_checkpoint
from flows.evaluation.rows import answer_row, trace_rows
from flows.evaluation.run_records import record_run, run_row, settings_summary
from schemas.config import Settings
from schemas.ids import sha256_bytes, stable_hash
from tasks.evaluate.gold_mapping import SectionLookup, gold_lines, gold_summary, gold_warning, map_gold
from tasks.evaluate.metrics import METRICS, Question, metric_rows, summarize
from tasks.evaluate.protocol import correctness, protocol_metric_rows, summarize_protocol
from tasks.evaluate.rubric import rubric_line, rubric_metric_rows, rubric_report
from tasks.query.store.doc_index import DocumentNotBuilt
from tasks.tables.io import Workspace, write_table
from tasks.tables.partitions import write_listing

SERVING_FIELDS = {"url", "timeout_s", "deadline_s", "max_retries", "backoff_s", "concurrency"}
JUDGING_FIELDS = {
    "judge_votes",
    "judge_temperature",
    "judge_url",
    "judge_model",
    "document_concurrency",
    "question_concurrency",
}


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
    protocol: dict[str, Any] = field(default_factory=dict)  # Overall, Pass@k, judge agreement (paper §4)
    by_qtype_protocol: dict[str, dict[str, Any]] = field(default_factory=dict)
    gold: dict[str, Any] = field(default_factory=dict)  # gold mapping: unmapped counts, recall per language
    warnings: list[str] = field(default_factory=list)
    rubric: dict[str, Any] = field(default_factory=dict)  # whole-story answers' rubric scores, by qtype too

    def to_json(self) -> dict[str, Any]:
        answered = int((self.rows["status"] == "answered").sum()) if not self.rows.empty else 0
        return {
            "system": self.system,
            "benchmark": self.benchmark,
            "run_id": self.run_id,
            "n_questions": answered,
            "offline": bool(self.rows["is_offline"].all()) if answered else True,
            "metrics": self.metrics,
            "by_qtype": self.by_qtype,
            "protocol": self.protocol,
            "by_qtype_protocol": self.by_qtype_protocol,
            "rubric": self.rubric,
            "skipped_documents": self.skipped_documents,
            "notes": self.notes,
            "gold_mapping": self.gold,
            "warnings": self.warnings,
        }


@dataclass(frozen=True)
class EvalJob:
    """An evaluation run by reference: what a Prefect flow gets instead of questions and an engine."""

    workspace: str
    questions: str
    questions_sha256: str
    limit: int | None
    run_id: str
    benchmark: str
    system: str
    samples: int


def _answer_question(
    engine: QueryEngine,
    run_id: str,
    benchmark: str,
    doc_id: str,
    question: Question,
    gold: list[str],
    unmapped: list[str],
    language: str | None,
    system: str,
    samples: int,
) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"qa_answers": [], "qa_traces": [], "llm_calls": [], "failures": []}
    for sample in range(samples):
        answer = engine.ask(doc_id, question.question, question.options, system, sample=sample)
        out["qa_answers"].append(
            answer_row(run_id, benchmark, question, sample, answer, gold, "answered", language, unmapped)
        )
        if engine.journal is not None:
            engine.journal.add(out["qa_answers"][-1])
        out["qa_traces"].extend(trace_rows(run_id, question.qid, sample, answer))
        out["llm_calls"].extend({**row, "doc_id": doc_id} for row in answer.llm_calls)
        out["failures"].extend({**row, "doc_id": doc_id} for row in answer.failures)
    if engine.on_answer is not None:
        engine.on_answer(1, doc_id)
    return out


def answer_document(
    engine: QueryEngine,
    run_id: str,
    benchmark: str,
    doc_id: str,
    questions: list[Question],
    system: str,
    samples: int,
) -> dict[str, list[dict]]:
    """Answer one document's questions; a missing document marks its questions, never raises.

    With an LLM, questions run `question_concurrency` at a time (the server does the work); offline
    answering is CPU-bound and runs one question at a time. A finished document is checkpointed."""
    out: dict[str, list[dict]] = {"qa_answers": [], "qa_traces": [], "llm_calls": [], "failures": []}
    try:
        warm_up(engine, doc_id)
        index = engine.index(doc_id)
    except DocumentNotBuilt:
        out["qa_answers"] = [
            answer_row(run_id, benchmark, q, s, None, [], "document_missing")
            for q in questions
            for s in range(samples)
        ]
        if engine.on_answer is not None:
            engine.on_answer(len(questions), f"{doc_id} (not in the workspace)")
        return out
    lookup = SectionLookup(index.sections)
    mappings = [map_gold(question.meta, lookup) for question in questions]
    workers = engine.settings.evaluate.question_concurrency if engine.llm is not None else 1
    args = [
        (engine, run_id, benchmark, doc_id, q, m.section_ids, m.unmapped, index.language, system, samples)
        for q, m in zip(questions, mappings)
    ]
    if workers > 1 and len(args) > 1:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="question") as pool:
            parts = list(pool.map(lambda a: _answer_question(*a), args))
    else:
        parts = [_answer_question(*a) for a in args]
    for part in parts:
        for table, rows in part.items():
            out[table].extend(rows)
    save_checkpoint(engine.workspace, run_id, doc_id, [q.qid for q in questions], samples, out)
    if engine.progress is not None:
        engine.progress(f"{doc_id}: {len(questions)} question(s) answered with {system}")
    return out


def evaluation_run_id(
    questions_path: Path, system: str, settings: Settings, limit: int | None, samples: int
) -> str:
    content = sha256_bytes(questions_path.read_bytes())
    # The judge and the run's concurrency do not change the answers: they are not part of the run id.
    answering = answering_identity(settings)
    return f"run_{stable_hash('eval', content, system, answering, limit, samples)}"


def answering_identity(settings: Settings) -> dict[str, Any]:
    """The settings that decide the answers: what the model is asked with, not where it is served
    (a server restarted on another port resumes the same run) nor how it is judged."""
    answering = settings.model_dump(mode="json", exclude={"evaluate": JUDGING_FIELDS, "llm": SERVING_FIELDS})
    answering["llm"]["served"] = settings.llm.url is not None  # offline and LLM answers differ
    return answering


def evaluate(
    workspace: Workspace,
    questions_path: Path,
    settings: Settings,
    *,
    system: str = "nkw",
    limit: int | None = None,
    samples: int = 1,
    benchmark: str | None = None,
    engine: QueryEngine | None = None,
    map_documents: Callable[..., list[dict[str, list[dict]]]] | None = None,
    judge: Any = None,
    fresh: bool = False,
    progress: Any = None,
    setting: str = "",
    variant: str = "",
    ablation_id: str | None = None,
) -> EvalReport:
    """Answer, score and store one run. `judge` (an LLM client) labels free-form answers with
    `settings.evaluate.judge_votes` votes each; finished documents and stored votes are reused
    unless `fresh`. Every answer is journaled as it is produced, so an interrupted run loses none.
    `progress` (a flows.runtime.Meter) counts the questions as they are answered. `setting`,
    `variant` and `ablation_id` name the ablation grid cell the run is (recorded in `eval_runs`)."""
    if limit is not None and limit < 1:
        raise QuestionFileError(f"--limit must be at least 1 (got {limit})")
    questions = question_budget(load_questions(questions_path), limit)
    check_documents(workspace, questions)
    benchmark = benchmark or benchmark_name(questions_path)
    run_id = evaluation_run_id(questions_path, system, settings, limit, samples)
    engine = engine or QueryEngine(workspace, settings)
    run = partial(
        run_row,
        run_id=run_id,
        benchmark=benchmark,
        questions_path=questions_path,
        questions_sha256=sha256_bytes(questions_path.read_bytes()),
        system=system,
        settings=settings_summary(answering_identity(settings), answering_identity(Settings())),
        setting=setting,
        variant=variant,
        ablation_id=ablation_id,
        limit=limit,
        samples=samples,
        expected=len(questions) * samples,
        judge_model=getattr(judge, "model", None),
    )
    record_run(workspace, run(answered=0, is_offline=settings.llm.url is None), finished=False)
    engine.journal = AnswerJournal(workspace, run_id)
    engine.sample_temperature = settings.evaluate.sample_temperature if samples > 1 else None
    if fresh:
        clear_checkpoints(workspace, run_id)
    by_doc: dict[str, list[Question]] = {}
    for question in questions:
        by_doc.setdefault(question.doc_id, []).append(question)
    all_jobs = [(doc_id, qs) for doc_id, qs in by_doc.items()]
    done = {
        doc_id: load_checkpoint(workspace, run_id, doc_id, [q.qid for q in qs], samples)
        for doc_id, qs in all_jobs
    }
    jobs = [(doc_id, qs) for doc_id, qs in all_jobs if done[doc_id] is None]
    if progress is not None:
        progress.set_total(len(questions))
        engine.on_answer = progress.advance
    if engine.on_answer is not None:
        reused_questions = sum(len(qs) for doc_id, qs in all_jobs if done[doc_id] is not None)
        if reused_questions:
            engine.on_answer(reused_questions, "reused from the run's checkpoints")
    if map_documents is None:
        fresh_results = [answer_document(engine, run_id, benchmark, d, qs, system, samples) for d, qs in jobs]
    else:
        job = EvalJob(
            str(workspace.root),
            str(questions_path.resolve()),
            sha256_bytes(questions_path.read_bytes()),
            limit,
            run_id,
            benchmark,
            system,
            samples,
        )
        fresh_results = map_documents(job, [doc_id for doc_id, _ in jobs], engine, settings) if jobs else []
    answered = dict(zip([d for d, _ in jobs], fresh_results))
    results = [done[doc_id] if done[doc_id] is not None else answered[doc_id] for doc_id, _ in all_jobs]
    frame = pd.DataFrame([row for result in results for row in result["qa_answers"]])
    write_table(workspace, "qa_answers", frame, run_id)
    write_table(workspace, "qa_traces", [row for result in results for row in result["qa_traces"]], run_id)
    for (doc_id, _), result in zip(all_jobs, results):
        # LLM accounting of query time lands beside the build's, one partition per run and document.
        if result["llm_calls"] or result["failures"]:
            write_table(workspace, "llm_calls", result["llm_calls"], doc_id, f"answer-{run_id}")
            write_table(workspace, "failures", result["failures"], doc_id, f"answer-{run_id}")
    notes = []
    reused = len(all_jobs) - len(jobs)
    if reused:
        notes.append(
            f"resumed: {reused} document(s) reused from the run's checkpoints (--fresh answers again)"
        )
    judgments = None
    if judge is not None:
        references = {q.qid: q.references for q in questions}
        judgments, stats = judge_run(
            workspace, run_id, benchmark, frame, judge, settings.evaluate, fresh, references
        )
        notes.append(
            f"judge {judge.model}: {stats['items']} free-form answer(s) x {settings.evaluate.judge_votes} "
            f"votes ({stats['rubric_items']} whole-story answer(s) scored with the rubric); "
            f"{stats['reused']} reused from stored votes; {stats['failed_votes']} failed vote(s)"
        )
    labelled = correctness(frame, judgments)
    metrics = metric_rows(run_id, benchmark, system, frame)
    metrics += protocol_metric_rows(run_id, benchmark, system, labelled, judgments, samples)
    metrics += rubric_metric_rows(run_id, benchmark, system, frame, judgments)
    write_table(workspace, "eval_metrics", metrics, run_id)
    answered = int((frame["status"] == "answered").sum())
    offline = bool(frame["is_offline"].fillna(True).all())
    record_run(workspace, run(answered=answered, is_offline=offline), finished=True)
    by_qtype = (
        {q: summarize(g) for q, g in frame.groupby(frame["qtype"].fillna("(none)"))}
        if frame["qtype"].notna().any()
        else {}
    )
    by_qtype_protocol = (
        {
            q: summarize_protocol(g, judgments, samples)
            for q, g in labelled.groupby(labelled["qtype"].fillna("(none)"))
        }
        if labelled["qtype"].notna().any()
        else {}
    )
    protocol = summarize_protocol(labelled, judgments, samples)
    rubric = rubric_report(frame, judgments)
    missing = sorted(frame.loc[frame["status"] == "document_missing", "doc_id"].unique().tolist())
    notes += [
        gaps for doc_id, _ in all_jobs if doc_id not in missing and (gaps := build_gaps(workspace, doc_id))
    ]
    if frame["is_offline"].fillna(True).all():
        notes.append("offline: answers are extractive (no LLM); ROUGE-L is against the reference text")
    if samples > 1 and frame["is_offline"].fillna(True).all():
        notes.append(
            "offline answers are deterministic: every sample of a question is identical, "
            "so Pass@k is not applicable (reported as —)"
        )
    if (
        judge is None
        and (labelled["correct_source"] == "none").any()
        and (frame["status"] == "answered").any()
    ):
        notes.append(
            "free-form answers are not judged without a judge (--judge-url or --llm-url): "
            "Overall covers multiple-choice questions only"
        )
    gold = gold_summary(frame)
    warnings = [w for w in [gold_warning(benchmark, gold)] if w]
    write_listing(workspace)
    return EvalReport(
        run_id,
        benchmark,
        system,
        frame,
        summarize(frame),
        by_qtype,
        missing,
        notes,
        protocol,
        by_qtype_protocol,
        gold=gold,
        warnings=warnings,
        rubric=rubric,
    )


def format_report(report: EvalReport, verbose: bool = False) -> str:
    """A plain-text table: the benchmark row, then one row per qtype; then evidence recall per
    language with the unmapped gold beside it (`verbose` lists the unmapped questions)."""
    header = f"{'qtype':<34} {'n':>4} " + " ".join(f"{m:>15}" for m in METRICS)
    lines = [
        f"benchmark {report.benchmark}  system {report.system}  run {report.run_id}",
        header,
        "-" * len(header),
    ]

    def row(name: str, metrics: dict[str, float | None], n: int) -> str:
        cells = " ".join(f"{'—' if metrics[m] is None else format(metrics[m], '.4g'):>15}" for m in METRICS)
        return f"{name[:34]:<34} {n:>4} {cells}"

    answered = report.rows[report.rows["status"] == "answered"]  # n counts questions, not samples
    lines.append(row("ALL", report.metrics, answered["qid"].nunique()))
    for qtype, metrics in sorted(report.by_qtype.items()):
        same = answered["qtype"].fillna("(none)") == qtype
        lines.append(row(qtype, metrics, answered[same]["qid"].nunique()))
    if report.protocol:
        p = report.protocol
        fmt = lambda v: "—" if v is None else format(v, ".4g")  # noqa: E731
        lines.append(
            f"Overall {fmt(p['overall'])} ({p['overall_source']})   Pass@{p['k']} {fmt(p['pass_at_k'])}   "
            f"judge agreement {fmt(p['judge_pairwise_agreement'])}   "
            f"Krippendorff alpha {fmt(p['judge_alpha'])}"
            f"   judged answers {p['judged_answers']}"
        )
    if report.rubric:
        lines.append(rubric_line(report.rubric))
    if report.skipped_documents:
        lines.append(f"not in workspace (questions skipped): {', '.join(report.skipped_documents)}")
    lines.extend(gold_lines(report.gold, verbose) if report.gold else [])
    lines.extend(f"warning: {warning}" for warning in report.warnings)
    lines.extend(f"note: {note}" for note in report.notes)
    return "\n".join(lines)
