"""`nkw report`: one self-contained HTML file (tables, and PNG figures embedded as base64) from the
named report queries in schemas/sql/report_*.sql, rendered by the Jinja template next to this module.

Runs are told apart by what they are: the runs table (`eval_runs`, with each run's start from its
run record and its answering model from its LLM calls) names each run's questions file and hash,
system, settings, samples, ablation setting, build variant, model and whether it finished, and every
row and bar carries its run's label (flows/inspection/report_runs.py), in one run order throughout.
A section with nothing to show is left out. Runs answered over a build variant (e.g. `saber_raw`)
live in the variant's workspace; their run tables are read with the base's. What each build's LLM
stages cost per source token is a section of its own (flows/inspection/build_costs.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from jinja2 import Environment, PackageLoader, select_autoescape

from tasks.evaluate.ablation_scenes import scene_intervals
from tasks.evaluate.rubric import RUBRIC_CRITERIA
from flows.inspection.build_costs import build_costs
from flows.inspection.report_charts import ablation_chart, figures
from flows.inspection.report_runs import answer_models, in_run_order, label_runs, model_of, run_order
from flows.inspection.run_files import read_run_files
from schemas.responses.judge import RUBRIC_SCALE
from schemas.tables import TABLES
from tasks.files import open_regular, write_output
from tasks.tables.io import Workspace
from tasks.tables.warehouse import connect, load_sql, table_files

QUERIES = {
    "runs": "report_runs",
    "systems": "report_systems",
    "qtypes": "report_qtypes",
    "ablation": "report_ablation",
    "tools": "report_tool_use",
    "latency": "report_latency_tokens",
    "judge": "report_judge_agreement",
    "rubric": "report_rubric",
}
VARIANTS_DIR = "variants"  # where flows.evaluation.ablation builds a grid's build variants
RUN_TABLES = tuple(name for name, table in TABLES.items() if table.partition == "run")


class ReportError(ValueError):
    """Nothing to report (no evaluation runs), or an unknown run id."""


@dataclass
class ReportData:
    frames: dict[str, pd.DataFrame]
    runs: list[str]
    notes: list[str] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)


def workspaces(workspace: Workspace) -> list[Workspace]:
    """The workspace and its build variants (each holds the runs answered over it)."""
    folder = workspace.root / VARIANTS_DIR
    variants = sorted(p for p in folder.iterdir() if (p / "tables").is_dir()) if folder.is_dir() else []
    return [workspace, *map(Workspace.at, variants)]


def run_files(places: list[Workspace]) -> dict[str, list[Path]]:
    """The base's table files, with every variant's run tables added."""
    files = table_files(places[0])[0]
    for variant in places[1:]:
        theirs = table_files(variant)[0]
        for name in RUN_TABLES:
            files[name] = files.get(name, []) + theirs.get(name, [])
    return files


def answer_llm_calls(places: list[Workspace]) -> pa.Table:
    """Tokens of every LLM call made while answering, with the partition's file name (which names
    the run). Read here: the report's DuckDB connection opens no file itself."""
    parts = []
    for workspace in places:
        for path in workspace.partitions("llm_calls"):
            if "__answer-" in path.stem:
                # The file itself: a run's partition is not a document's, so it is not read by part.
                with open_regular(path) as handle:
                    table = pq.read_table(handle, columns=["prompt_tokens", "completion_tokens", "model"])
                parts.append(table.append_column("filename", pa.array([path.name] * len(table), pa.string())))
    if parts:
        return pa.concat_tables(parts)
    return pa.schema(
        [
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("model", pa.string()),
            ("filename", pa.string()),
        ]
    ).empty_table()


def run_records(places: list[Workspace], runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's start (its run record) and, for a run that did not finish, the answers its journal
    kept (a killed run never wrote its final row)."""
    started, kept = [], []
    for run_id in runs["run_id"]:
        record, journal = read_run_files(places, run_id)
        moment = record.get("started")
        started.append(moment if isinstance(moment, str) else None)  # a damaged record: not known
        kept.append(journal)
    runs = runs.copy()
    runs["started"] = started
    runs["answered"] = [max(int(a or 0), k) for a, k in zip(runs["answered"], kept)]
    return runs


def load_report_data(
    workspace: Workspace, runs: list[str] | None = None, ablation_id: str | None = None
) -> ReportData:
    """Run every named report query over the workspace and its variants (restricted to `runs`)."""
    places = workspaces(workspace)
    con = connect(workspace, files=run_files(places))
    try:
        known = [
            r[0]
            for r in con.execute(
                "SELECT run_id FROM eval_runs UNION SELECT run_id FROM qa_answers ORDER BY run_id"
            ).fetchall()
        ]
        chosen = runs or known
        unknown = sorted(set(chosen) - set(known))
        if unknown:
            raise ReportError(
                f"no evaluation run {', '.join(unknown)} in this workspace (see `nkw sql` on eval_runs)"
            )
        if not chosen:
            raise ReportError(
                "this workspace has no evaluation runs yet: run `nkw eval` or `nkw ablate` first"
            )
        con.register("selected_runs", pd.DataFrame({"run_id": chosen}))
        con.register(
            "selected_ablation", pd.DataFrame({"id": [ablation_id] if ablation_id else []}, dtype=str)
        )
        calls = answer_llm_calls(places)
        con.register("llm_calls_files", calls)
        frames = {key: con.execute(load_sql(name)).df() for key, name in QUERIES.items()}
    finally:
        con.close()
    frames["runs"] = run_records(places, frames["runs"])
    models = answer_models(calls)
    labels = label_runs(frames["runs"], models)
    order = run_order(frames["runs"])
    for key, frame in list(frames.items()):
        frame = frames[key] = in_run_order(frame, order)
        if key != "ablation" and "run_id" in frame:
            frame.insert(0, "label", frame["run_id"].map(labels).fillna(frame["run_id"]))
    frames["runs"]["model"] = [model_of(row, models) for row in frames["runs"].to_dict("records")]
    ablation = frames["ablation"]
    ablation.insert(
        0,
        "label",
        ablation["setting"] + ablation["workspace"].map(lambda w: "" if w == "base" else " (build)"),
    )
    scenes = scene_intervals(workspace, ablation.assign(qtype="*")) if len(ablation) else pd.DataFrame()
    if len(scenes):
        scenes["excludes_zero"] = scenes["excludes_zero"].map({True: "yes", False: ""})
        settings = {setting: place for place, setting in enumerate(dict.fromkeys(ablation["setting"]))}
        scenes = scenes.sort_values("setting", key=lambda s: s.map(settings), kind="stable")
    frames["scenes"] = scenes.reset_index(drop=True)
    frames["build_costs"] = build_costs(places)
    return ReportData(frames, chosen, models=models)


def number(value: Any, delta: bool = False) -> str:
    """A figure for reading: 3 decimals below 10, 1 below 100, none above; `delta` shows the sign."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "—"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) and not delta:
        return f"{value:,}"
    size = abs(value)
    digits = 3 if size < 10 else 1 if size < 100 else 0
    return f"{value:+,.{digits}f}" if delta else f"{value:,.{digits}f}"


def _cell(value: Any, column: str) -> str:
    if hasattr(value, "item"):
        value = value.item()  # numpy scalars
    if isinstance(value, float) and value.is_integer() and column in INTEGER_COLUMNS:
        value = int(value)
    return number(value, delta=column.endswith("_delta"))


INTEGER_COLUMNS = {
    "n", "samples", "calls", "questions", "judged_answers", "votes", "expected", "answered",
    "source_tokens", "requests", "cache_reported",
}  # fmt: skip
# (section, heading, columns shown as (column, header)); the figure of the section sits above its table.
SECTIONS = (
    ("systems", "Scores per run", [
        ("label", "run"), ("benchmark", "benchmark"), ("n", "n"), ("samples", "samples"),
        ("offline", "offline"), ("overall", "Overall"), ("pass_at_k", "Pass@k"),
        ("evidence_recall", "evidence recall"), ("mcq_accuracy", "MCQ accuracy"),
    ]),
    ("qtypes", "Per question type, per run", [
        ("label", "run"), ("qtype", "question type"), ("n", "n"), ("overall", "Overall"),
        ("evidence_recall", "evidence recall"),
    ]),
    ("ablation", "Ablations against the full system", [
        ("label", "setting"), ("benchmark", "benchmark"), ("n", "n"), ("overall", "Overall"),
        ("overall_delta", "Δ Overall"), ("pass_at_k", "Pass@k"), ("evidence_recall", "evidence recall"),
        ("evidence_recall_delta", "Δ evidence recall"), ("llm_tokens_per_q", "LLM tokens / q"),
        ("latency_ms_p50", "latency p50 (ms)"),
    ]),
    ("scenes", "Every gold scene per question type against the full system (95 % paired bootstrap)", [
        ("setting", "setting"), ("group", "question type"), ("n", "n"), ("every", "every gold scene"),
        ("difference", "Δ vs full"), ("low", "low"), ("high", "high"), ("excludes_zero", "excludes 0"),
    ]),
    ("tools", "Tool use per run (qa_traces)", [
        ("label", "run"), ("tool", "tool"), ("calls", "calls"), ("calls_per_question", "calls / question"),
    ]),
    ("latency", "Latency and tokens per question, per run", [
        ("label", "run"), ("questions", "questions"), ("latency_ms_p50", "latency p50 (ms)"),
        ("latency_ms_p95", "latency p95 (ms)"), ("evidence_tokens_mean", "evidence tokens"),
        ("llm_tokens_per_question", "LLM tokens / question"),
    ]),
    ("build_costs", "LLM tokens of the build per source token", [
        ("build", "build · model"), ("source_tokens", "source tokens"), ("requests", "requests"),
        ("cache_reported", "cache reported"), ("prompt_per_source", "prompt billed"),
        ("computed_per_source", "prompt computed"), ("completion_per_source", "completion"),
    ]),
    ("judge", "Judge agreement per run (appendix B.3)", [
        ("label", "run"), ("judge_model", "judge"), ("judged_answers", "judged answers"), ("votes", "votes"),
        ("pairwise_agreement", "pairwise agreement"), ("krippendorff_alpha", "Krippendorff α"),
    ]),
    ("rubric", "Long answers: rubric judge per run", [
        ("label", "run"), ("judge_model", "judge"), ("judged_answers", "judged answers"),
        *((c, f"{c} ({RUBRIC_SCALE[0]}-{RUBRIC_SCALE[1]})") for c in RUBRIC_CRITERIA), ("score", "score"),
        ("rouge_1_f1", "ROUGE-1"), ("rouge_2_f1", "ROUGE-2"), ("rouge_l_f1", "ROUGE-L"),
    ]),
)  # fmt: skip
RUN_COLUMNS = [
    ("label", "run"), ("started", "started (UTC)"), ("questions_file", "questions file"),
    ("system", "system"),
    ("settings", "settings (not default)"), ("question_limit", "limit"), ("samples", "samples"),
    ("variant", "build variant"), ("model", "answering model"), ("status", "status"),
]  # fmt: skip
NOTES = {
    "build_costs": "Tokens the build's LLM stages asked for, per token of the text they read (its "
    "chunks): prompt tokens as billed, and as the server computed them, without the prefix it read "
    "from its cache (cache reported: requests whose server said; the others count in full), and "
    "completion tokens. Requests leave out replies from NKW's own cache, which cost nothing.",
    "rubric": "Whole-story answers scored by the rubric judge against every reference: each criterion "
    "is an answer's median over its votes, averaged over the judged answers; the score is the mean of "
    "the criteria mapped to 0-1. Its votes are not the correctness judge's (judge agreement counts "
    "label votes only). ROUGE F1 is against the best reference, over every answered question of the run.",
}


def _rows(frame: pd.DataFrame, columns: list[tuple[str, str]]) -> list[list[str]]:
    shown = [c for c, _ in columns if c in frame]
    return [[_cell(row[c], c) for c in shown] for row in frame.to_dict("records")]


def _run_rows(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The runs table: each cell a list of (line, is_note) (the run id under the label, the file's
    hash under its name, one setting per line)."""
    rows = []
    for row in runs.to_dict("records"):
        cells = {c: [(_cell(row.get(c), c), False)] for c, _ in RUN_COLUMNS}
        cells["label"].append((row["run_id"], True))
        if row.get("questions_sha256"):
            cells["questions_file"].append((f"sha256 {row['questions_sha256'][:12]}", True))
        moment = row.get("started")  # NaN where a string column misses this run's value
        shown = moment.replace("T", " ").removesuffix("+00:00") if isinstance(moment, str) and moment else "—"
        cells["started"] = [(shown, False)]
        cells["settings"] = [(s, False) for s in (row.get("settings") or "defaults").split(", ")]
        cells["variant"] = [(row.get("variant") or "—", False)]
        limit = row.get("question_limit")
        shown = _cell(limit, "n") if limit is not None and pd.notna(limit) else "none"
        cells["question_limit"] = [(shown, False)]
        answered, expected = _cell(row["answered"], "answered"), _cell(row["expected"], "expected")
        cells["status"] = [(row["status"], False), (f"{answered} of {expected} answers", True)]
        rows.append({"cells": [cells[c] for c, _ in RUN_COLUMNS], "complete": row["status"] == "complete"})
    return rows


def render_html(data: ReportData, title: str = "NKW evaluation report") -> str:
    images = figures(data.frames)
    sections = []
    for key, heading, columns in SECTIONS:
        frame = data.frames[key]
        if frame.empty and not images.get(key):
            continue  # a heading with nothing under it says nothing
        caption = ablation_chart(frame)[1] if key == "ablation" and not frame.empty else ""
        sections.append(
            {
                "key": key,
                "heading": heading,
                "image": images.get(key),
                "caption": caption,
                "note": NOTES.get(key, ""),
                "headers": [h for c, h in columns if c in frame],
                "rows": _rows(frame, columns),
            }
        )
    environment = Environment(
        loader=PackageLoader("flows.inspection", "templates"), autoescape=select_autoescape(default=True)
    )
    return environment.get_template("report.html").render(
        title=title,
        run_headers=[h for _, h in RUN_COLUMNS],
        run_classes=["status" if c == "status" else "text" for c, _ in RUN_COLUMNS],
        runs=_run_rows(data.frames["runs"]),
        sections=sections,
    )


def write_report(
    workspace: Workspace, out: Path, runs: list[str] | None = None, ablation_id: str | None = None
) -> dict:
    data = load_report_data(workspace, runs, ablation_id)
    text = render_html(data)
    write_output(out, text)  # never through a link planted in the output folder
    frame = data.frames["runs"]
    return {
        "out": str(out),
        "runs": len(data.runs),
        "incomplete_runs": int((frame["status"] != "complete").sum()),
        "bytes": len(text.encode("utf-8")),
        "plots": text.count("data:image/png;base64,"),
    }
