"""`nkw ablate`: the ablation grid as a Prefect flow. Build-time variants are prepared first (each
re-runs only what its switch changes), then every setting answers the same questions in parallel
task runs; one `ablation_results` partition per grid run lands in the base workspace.

The flow and its tasks take references only: workspace and questions-file paths (with each file's
content hash), setting names, the settings as plain data (the LLM and judge as URL and model
names; the API key comes from the environment) and the run's options. Each task builds its own
LLM and judge clients and closes them; the embedding model is loaded once per process."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from flows.answer_questions import QueryEngine
from flows.build.sessions import api_key, settings_payload
from flows.evaluation.ablation import (
    ABLATIONS,
    AblationError,
    ablation_id_for,
    is_noop,
    llm_tokens,
    prepare_variant,
    result_rows,
    shared_embedder_factory,
    variant_settings,
)
from flows.evaluation.evaluate import evaluate
from flows.evaluation.judging import judge_client
from flows.evaluation.question_budget import question_budget
from flows.evaluation.question_file import load_questions
from flows.prefect_server import reporting_to_server
from schemas.config import Settings
from schemas.ids import sha256_bytes, stable_hash
from tasks.embeddings import build_embedder
from tasks.evaluate.ablation_scenes import format_scene_intervals, scene_intervals
from tasks.llm.client.factory import build_llm_client
from tasks.tables.io import Workspace, write_table

_EMBEDDERS: dict[str, Callable] = {}
_LOCK = threading.Lock()
# Progress meters of the grids this process started, by key: tasks in this process advance them
# (a meter is not a parameter a flow can carry).
_METERS: dict[str, Any] = {}


@dataclass
class AblationReport:
    ablation_id: str
    rows: pd.DataFrame
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    scenes: pd.DataFrame = field(default_factory=pd.DataFrame)  # every-gold per setting with intervals


@dataclass(frozen=True)
class GridJob:
    """One grid run by reference: what the flow and its tasks get instead of objects."""

    workspace: str
    questions: list[str]
    questions_sha256: list[str]
    ablation_id: str
    limit: int | None
    samples: int
    system: str
    fresh: bool
    progress: str | None = None  # the key of this process's meter in _METERS


def embedder_factory_for(settings: Settings) -> Callable:
    """The process's embedder factory for these embedding settings (each model loads once)."""
    key = stable_hash("embedders", settings.embed_texts.model_dump(mode="json"))
    with _LOCK:
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = shared_embedder_factory(settings)
        return _EMBEDDERS[key]


def _clients(settings: Settings, workspace: Workspace) -> tuple[Any, Any]:
    """The answering LLM client (None offline) and the judge (its own server/model, else the LLM)."""
    llm = build_llm_client(settings.llm, api_key(), workspace.cache_dir / "llm")
    return llm, judge_client(settings, api_key(), workspace) or llm


def _close(*clients: Any) -> None:
    for client in {id(c): c for c in clients if c is not None}.values():
        client.close()


def _question_paths(job: GridJob) -> list[Path]:
    paths = [Path(p) for p in job.questions]
    for path, sha256 in zip(paths, job.questions_sha256):
        if not path.is_file() or sha256_bytes(path.read_bytes()) != sha256:
            raise AblationError(f"{path} changed or disappeared while the grid was running")
    return paths


def answer_setting(job: dict[str, Any], name: str, workspace: str, settings: dict[str, Any]) -> list[dict]:
    """One setting over every questions file (offline answers unless the settings name an LLM)."""
    grid = GridJob(**job)
    parsed = Settings.model_validate(settings)
    target = Workspace.at(workspace)
    llm, judge = _clients(parsed, target)
    try:
        engine = QueryEngine(target, parsed, embedder_factory=embedder_factory_for(parsed), llm=llm)
        meter = _METERS.get(grid.progress or "")
        if meter is not None:
            engine.on_answer = lambda n, _note: meter.advance(n, name)
        rows = []
        for path in _question_paths(grid):
            report = evaluate(
                target,
                path,
                parsed,
                system=grid.system,
                limit=grid.limit,
                samples=grid.samples,
                engine=engine,
                judge=judge,
                fresh=grid.fresh,
                setting=name,
                variant=name if Path(workspace).resolve() != Path(grid.workspace).resolve() else "",
                ablation_id=grid.ablation_id,
            )
            tokens = llm_tokens(target, report.run_id)
            rows += result_rows(grid.ablation_id, name, report, target, grid.samples, tokens)
        return rows
    finally:
        _close(llm, judge)


def build_variant(workspace: str, name: str, settings: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The variant workspace of build-time setting `name` (its root) and its build figures."""
    parsed = Settings.model_validate(settings)
    base = Workspace.at(workspace)
    llm = build_llm_client(parsed.llm, api_key(), base.cache_dir / "llm")
    try:
        variant, stats = prepare_variant(
            base, ABLATIONS[name], parsed, llm, lambda: build_embedder(parsed.embed_texts, api_key())
        )
    finally:
        _close(llm)
    return str(variant.root), stats


def same_configuration(plans: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Each setting whose workspace and settings equal an earlier setting's, mapped to that one."""
    first: dict[str, str] = {}
    same: dict[str, str] = {}
    for name, (root, payload) in plans.items():
        key = stable_hash("plan", root, payload)
        if key in first:
            same[name] = first[key]
        else:
            first[key] = name
    return same


@task(name="prepare_variant", cache_policy=NO_CACHE, persist_result=False)
def prepare_variant_task(workspace: str, name: str, settings: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return build_variant(workspace, name, settings)


@task(name="answer_setting", cache_policy=NO_CACHE, persist_result=False)
def answer_setting_task(
    job: dict[str, Any], name: str, workspace: str, settings: dict[str, Any]
) -> list[dict[str, Any]]:
    return answer_setting(job, name, workspace, settings)


def run_ablation(
    workspace: Workspace,
    questions: list[Path],
    base: Settings,
    names: list[str],
    *,
    limit: int | None = None,
    samples: int = 1,
    system: str = "nkw",
    fresh: bool = False,
    use_prefect: bool = True,
    parallel: int = 2,
    progress: Any = None,
) -> AblationReport:
    """Run the grid; the LLM and judge are the ones `base` names (none: offline). `progress` (a
    flows.runtime.Meter) counts settings x questions as they are answered."""
    resolved = [str(Path(q).resolve()) for q in questions]
    hashes = [sha256_bytes(Path(q).read_bytes()) for q in resolved]
    key = uuid.uuid4().hex if progress is not None else None
    if key is not None:
        _METERS[key] = progress
    arguments = (str(workspace.root), resolved, hashes, settings_payload(base), names, limit, samples, system)
    try:
        if use_prefect:
            runner = ablate_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=parallel))
            with reporting_to_server(progress):
                return runner(*arguments, fresh, key)
        return _run(*arguments, fresh, key, prefect=False)
    finally:
        _METERS.pop(key or "", None)


def _run(
    workspace: str,
    questions: list[str],
    questions_sha256: list[str],
    settings: dict[str, Any],
    names: list[str],
    limit: int | None,
    samples: int,
    system: str,
    fresh: bool,
    progress: str | None,
    prefect: bool,
) -> AblationReport:
    base = Settings.model_validate(settings)
    ablation_id = ablation_id_for([Path(q) for q in questions], base, names, limit, samples, system)
    job = dataclasses.asdict(
        GridJob(workspace, questions, questions_sha256, ablation_id, limit, samples, system, fresh, progress)
    )
    meter = _METERS.get(progress or "")
    plans: dict[str, tuple[str, dict[str, Any]]] = {}
    variants: dict[str, dict[str, Any]] = {}
    for name in names:  # build variants one at a time: building is CPU-bound
        ablation = ABLATIONS[name]
        payload = settings_payload(variant_settings(base, ablation))
        if ablation.kind == "build" and not is_noop(base, ablation):
            if meter is not None:
                meter.log(f"preparing the build variant {name}")
            if prefect:
                prepare = prepare_variant_task.with_options(task_run_name=f"variant[{name}]")
                root, stats = prepare(workspace, name, payload)
            else:
                root, stats = build_variant(workspace, name, payload)
            variants[name] = stats
            plans[name] = (root, payload)
        else:
            plans[name] = (workspace, payload)
    # A setting equal to one before it (follow_up_2 and saber_saber on the default full system) is
    # the same run: it is answered once, never twice at the same time under one run id.
    same_as = same_configuration(plans)
    todo = {name: plan for name, plan in plans.items() if name not in same_as}
    if meter is not None:
        per_setting = sum(len(question_budget(load_questions(Path(q)), limit)) for q in questions)
        meter.set_total(len(todo) * per_setting)
    if prefect:
        futures = {
            name: answer_setting_task.with_options(task_run_name=f"answer[{name}]").submit(
                job, name, root, payload
            )
            for name, (root, payload) in todo.items()
        }
        results = {name: future.result() for name, future in futures.items()}
    else:
        results = {name: answer_setting(job, name, root, payload) for name, (root, payload) in todo.items()}
    for name, first in same_as.items():
        results[name] = [{**row, "setting": name} for row in results[first]]
    rows = [row for name in names for row in results[name]]
    write_table(Workspace.at(workspace), "ablation_results", rows, ablation_id)
    notes = [f"{name} is the same configuration as {first}: answered once" for name, first in same_as.items()]
    if all(r["offline"] for r in rows):
        notes.append(
            "offline: answers are extractive (no LLM); free-form Overall needs the LLM judge (—), "
            "Pass@k is not applicable to deterministic answers"
        )
    frame = pd.DataFrame(rows)
    scenes = scene_intervals(Workspace.at(workspace), frame) if len(frame) else pd.DataFrame()
    return AblationReport(ablation_id, frame, variants, notes, scenes)


@flow(name="ablate", persist_result=False, validate_parameters=False)
def ablate_flow(
    workspace: str,
    questions: list[str],
    questions_sha256: list[str],
    settings: dict[str, Any],
    names: list[str],
    limit: int | None,
    samples: int,
    system: str,
    fresh: bool,
    progress: str | None = None,
) -> AblationReport:
    return _run(
        workspace,
        questions,
        questions_sha256,
        settings,
        names,
        limit,
        samples,
        system,
        fresh,
        progress,
        prefect=True,
    )


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
    lines.extend(format_scene_intervals(report.scenes))
    lines.extend(f"note: {n}" for n in report.notes)
    return "\n".join(lines)
