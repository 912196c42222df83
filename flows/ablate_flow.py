"""`nkw ablate`: the ablation grid as a Prefect flow. Build-time variants are prepared first (each
re-runs only what its switch changes), then every setting answers the same questions in parallel
task runs; one `ablation_results` partition per grid run lands in the base workspace."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from flows.ablation import (
    ABLATIONS,
    ablation_id_for,
    is_noop,
    llm_tokens,
    prepare_variant,
    result_rows,
    shared_embedder_factory,
    variant_settings,
)
from flows.answer_questions import QueryEngine
from flows.evaluation import evaluate
from schemas.config import Settings
from tasks.embeddings import build_embedder
from tasks.tables.io import Workspace, write_table


@dataclass
class AblationReport:
    ablation_id: str
    rows: pd.DataFrame
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def answer_setting(
    name: str,
    workspace: Workspace,
    settings: Settings,
    questions: list[Path],
    ablation_id: str,
    limit: int | None,
    samples: int,
    system: str,
    llm: Any,
    judge: Any,
    fresh: bool,
    embedder_factory: Any,
) -> list[dict[str, Any]]:
    """One setting over every questions file (offline answers unless `llm`)."""
    engine = QueryEngine(workspace, settings, embedder_factory=embedder_factory, llm=llm)
    rows = []
    for path in questions:
        report = evaluate(
            workspace,
            path,
            settings,
            system=system,
            limit=limit,
            samples=samples,
            engine=engine,
            judge=judge,
            fresh=fresh,
        )
        rows += result_rows(
            ablation_id, name, report, workspace, samples, llm_tokens(workspace, report.run_id)
        )
    return rows


@task(name="prepare_variant", cache_policy=NO_CACHE, persist_result=False)
def prepare_variant_task(base: Workspace, name: str, settings: Settings, llm: Any) -> tuple[Workspace, dict]:
    return prepare_variant(base, ABLATIONS[name], settings, llm, lambda: build_embedder(settings.embed_texts))


@task(name="answer_setting", cache_policy=NO_CACHE, persist_result=False)
def answer_setting_task(*args: Any) -> list[dict[str, Any]]:
    return answer_setting(*args)


def run_ablation(
    workspace: Workspace,
    questions: list[Path],
    base: Settings,
    names: list[str],
    *,
    limit: int | None = None,
    samples: int = 1,
    system: str = "nkw",
    llm: Any = None,
    judge: Any = None,
    fresh: bool = False,
    use_prefect: bool = True,
    parallel: int = 2,
) -> AblationReport:
    if use_prefect:
        runner = ablate_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=parallel))
        return runner(workspace, questions, base, names, limit, samples, system, llm, judge, fresh)
    return _run(workspace, questions, base, names, limit, samples, system, llm, judge, fresh, prefect=False)


def _run(
    workspace, questions, base, names, limit, samples, system, llm, judge, fresh, prefect: bool
) -> AblationReport:
    ablation_id = ablation_id_for(questions, base, names, limit, samples, system)
    embedder_factory = shared_embedder_factory(base)
    plans: dict[str, tuple[Workspace, Settings]] = {}
    variants: dict[str, dict[str, Any]] = {}
    for name in names:  # build variants one at a time: building is CPU-bound
        ablation = ABLATIONS[name]
        settings = variant_settings(base, ablation)
        if ablation.kind == "build" and not is_noop(base, ablation):
            if prefect:
                ws, stats = prepare_variant_task.with_options(task_run_name=f"variant[{name}]")(
                    workspace, name, settings, llm
                )
            else:
                ws, stats = prepare_variant(
                    workspace, ablation, settings, llm, lambda: build_embedder(settings.embed_texts)
                )
            variants[name] = stats
            plans[name] = (ws, settings)
        else:
            plans[name] = (workspace, settings)
    args = {
        name: (
            name,
            ws,
            settings,
            questions,
            ablation_id,
            limit,
            samples,
            system,
            llm,
            judge,
            fresh,
            embedder_factory,
        )
        for name, (ws, settings) in plans.items()
    }
    if prefect:
        futures = {
            name: answer_setting_task.with_options(task_run_name=f"answer[{name}]").submit(*a)
            for name, a in args.items()
        }
        results = {name: future.result() for name, future in futures.items()}
    else:
        results = {name: answer_setting(*a) for name, a in args.items()}
    rows = [row for name in names for row in results[name]]
    write_table(workspace, "ablation_results", rows, ablation_id)
    notes = []
    if all(r["offline"] for r in rows):
        notes.append(
            "offline: answers are extractive (no LLM); free-form Overall needs the LLM judge (—), "
            "Pass@k is not applicable to deterministic answers"
        )
    return AblationReport(ablation_id, pd.DataFrame(rows), variants, notes)


@flow(name="ablate", persist_result=False, validate_parameters=False)
def ablate_flow(
    workspace: Workspace,
    questions: list[Path],
    base: Settings,
    names: list[str],
    limit: int | None,
    samples: int,
    system: str,
    llm: Any,
    judge: Any,
    fresh: bool,
) -> AblationReport:
    return _run(workspace, questions, base, names, limit, samples, system, llm, judge, fresh, prefect=True)


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def format_ablation(report: AblationReport) -> str:
    """The paper's ablation table: Overall / Pass@k / evidence recall per setting and benchmark, with the
    change against the full system."""
    rows = report.rows[report.rows["qtype"] == "*"]
    header = (
        f"{'setting':<24} {'benchmark':<28} {'n':>4} {'overall (Δ)':>17} {'pass@k':>8} "
        f"{'evidence recall (Δ)':>21}"
    )
    lines = [f"ablation {report.ablation_id}", header, "-" * len(header)]
    full = {r["benchmark"]: r for r in rows[rows["setting"] == "full"].to_dict("records")}

    def cell(row: dict, column: str) -> str:
        value, base = row[column], full.get(row["benchmark"], {}).get(column)
        if value is None or pd.isna(value):
            return "—"
        if row["setting"] == "full" or base is None or pd.isna(base):
            return f"{value:.4f}"
        return f"{value:.4f} ({value - base:+.3f})"

    for row in sorted(
        rows.to_dict("records"), key=lambda r: (r["benchmark"], list(ABLATIONS).index(r["setting"]))
    ):
        lines.append(
            f"{ABLATIONS[row['setting']].label:<24} {row['benchmark'][:28]:<28} {row['n']:>4} "
            f"{cell(row, 'overall'):>17} {_fmt(row['pass_at_k']):>8} {cell(row, 'evidence_recall'):>21}"
        )
    for name, stats in report.variants.items():
        lines.append(
            f"variant {name}: {stats['stages_reused']} stage runs reused, {stats['stages_built']} rebuilt "
            f"({', '.join(stats['rebuilt']) or 'none'}) in {stats['seconds']} s"
        )
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)
