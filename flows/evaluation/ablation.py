"""The ablation grid (paper §4.3 and the ablation appendices): one setting removes one component.

Query-time settings answer over the base workspace with one switch flipped. Build-time settings
(graph refinement, the SABER mode) get their own workspace under `<base>/variants/<setting>`: the
base's manifest and document tables are linked in, then a build re-runs only the stages whose
fingerprint changed (the switched stage and what reads its outputs). Every setting answers the same
questions (the budget is fixed by `limit`); results land in one `ablation_results` table.
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from flows.build.corpus import build, make_resources
from flows.evaluation.evaluate import EvalReport, answering_identity
from schemas.config import Settings
from schemas.ids import sha256_bytes, stable_hash
from schemas.tables import TABLES
from tasks.embeddings import embedder_for_identity
from tasks.tables.io import Workspace, atomic_write_text
from tasks.tables.manifest import list_manifests


@dataclass(frozen=True)
class Ablation:
    name: str
    label: str  # the paper's row name
    kind: str  # "query" | "build"
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)


ABLATIONS: dict[str, Ablation] = {
    a.name: a
    for a in (
        Ablation("full", "Full system", "query"),
        Ablation("no_attributes", "w/o attributes", "query", {"answer": {"attributes": False}}),
        Ablation("no_hierarchy", "w/o ep./storyline agg.", "query", {"answer": {"hierarchy": False}}),
        Ablation(
            "no_refinement", "w/o graph refinement", "build", {"canonicalize_entities": {"enabled": False}}
        ),
        Ablation("no_graph_tools", "w/o graph tools", "query", {"answer": {"graph_tools": False}}),
        Ablation("no_reading_skills", "w/o reading skills", "query", {"answer": {"reading_skills": False}}),
        Ablation("follow_up_0", "follow-up depth 0", "query", {"answer": {"follow_up_rounds": 0}}),
        Ablation("follow_up_1", "follow-up depth 1", "query", {"answer": {"follow_up_rounds": 1}}),
        Ablation("follow_up_2", "follow-up depth 2", "query", {"answer": {"follow_up_rounds": 2}}),
        Ablation("saber_raw", "SABER: raw", "build", {"break_cycles": {"mode": "raw"}}),
        Ablation("saber_heuristic", "SABER: heuristic", "build", {"break_cycles": {"mode": "heuristic"}}),
        Ablation("saber_saber", "SABER: saber", "build", {"break_cycles": {"mode": "saber"}}),
    )
}
PAPER_TABLE = (
    "full",
    "no_attributes",
    "no_hierarchy",
    "no_refinement",
    "no_graph_tools",
    "no_reading_skills",
)
DEFAULT_SETTINGS = PAPER_TABLE + ("follow_up_0", "follow_up_1", "saber_raw", "saber_heuristic")


class AblationError(ValueError):
    """An unknown setting or a base workspace whose inputs cannot be found."""


def parse_settings(text: str | None) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()] if text else list(DEFAULT_SETTINGS)
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown:
        raise AblationError(
            f"unknown ablation setting(s) {', '.join(unknown)}; choose from {', '.join(ABLATIONS)}"
        )
    return list(dict.fromkeys(names))


def variant_settings(base: Settings, ablation: Ablation) -> Settings:
    """`base` with the ablation's sections overridden (everything else unchanged)."""
    data = base.model_dump(mode="json")
    for section, values in ablation.overrides.items():
        data[section] = {**data[section], **values}
    return Settings.model_validate(data)


def is_noop(base: Settings, ablation: Ablation) -> bool:
    """A build setting equal to the base build (e.g. saber_saber on a saber build) uses the base workspace."""
    return variant_settings(base, ablation) == base


def base_inputs(workspace: Workspace) -> list[str]:
    """The input files the base workspace was built from (manifest `source`: `file` or `file#record`)."""
    paths = sorted({m.source.split("#", 1)[0] for m in list_manifests(workspace) if m.source})
    missing = [p for p in paths if not Path(p).exists()]
    if not paths or missing:
        raise AblationError(
            f"build-time settings rebuild from the base's inputs, which are missing: "
            f"{', '.join(missing) or '(none recorded)'}"
        )
    return paths


def link_base(base: Workspace, variant: Workspace) -> int:
    """Link the base's manifest and per-document table files into the variant (atomic writes replace
    a link, never the base file). Run tables (answers, judgments, results) stay with the base."""
    linked = 0
    for folder in (variant.tables_dir, variant.manifest_dir):
        shutil.rmtree(folder, ignore_errors=True)
    variant.manifest_dir.mkdir(parents=True, exist_ok=True)
    for manifest in base.manifest_dir.glob("*.json"):
        shutil.copyfile(manifest, variant.manifest_dir / manifest.name)
    for name, table in TABLES.items():
        if table.partition == "run":
            continue
        for path in base.partitions(name):
            target = variant.root / path.relative_to(base.root)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
            linked += 1
    llm_cache = base.cache_dir / "llm"
    if llm_cache.is_dir() and not (variant.cache_dir / "llm").exists():
        variant.cache_dir.mkdir(parents=True, exist_ok=True)
        (variant.cache_dir / "llm").symlink_to(llm_cache, target_is_directory=True)
    return linked


def base_digest(base: Workspace) -> str:
    """What the base build is: the hash of its manifests (they change whenever a stage is rebuilt)."""
    manifests = sorted(base.manifest_dir.glob("*.json"))
    return stable_hash("base", [(p.name, sha256_bytes(p.read_bytes())) for p in manifests])


def prepare_variant(
    base: Workspace,
    ablation: Ablation,
    settings: Settings,
    llm: Any = None,
    embedder_factory: Callable | None = None,
) -> tuple[Workspace, dict[str, Any]]:
    """The variant's workspace, built by re-running only the stages the switch changes. A variant
    built before from the same base build is kept (its build then skips what is up to date), so a
    rerun of the grid does not redo its variants."""
    variant = Workspace.at(base.root / "variants" / ablation.name)
    marker = variant.cache_dir / "ablation_base.sha256"
    digest = base_digest(base)
    same_base = marker.is_file() and marker.read_text(encoding="utf-8") == digest
    if not same_base:
        marker.unlink(missing_ok=True)
    linked = 0 if same_base else link_base(base, variant)
    documents = {
        m.doc_id for m in list_manifests(base)
    }  # the base's documents, not every record of its inputs
    report = build(
        base_inputs(base),
        variant,
        settings,
        resources=make_resources(settings, llm=llm, embedder_factory=embedder_factory),
        quiet=True,
        doc_ids=documents,
    )
    if not report.ok:
        raise AblationError(f"building the {ablation.name} variant failed: {report.summary()}")
    atomic_write_text(marker, digest)
    rebuilt = sorted({o.stage for d in report.documents for o in d.outcomes if o.status == "built"})
    return variant, {
        "linked_files": linked,
        "stages_built": report.count("built"),
        "stages_reused": report.count("skipped"),
        "rebuilt": rebuilt,
        "seconds": round(report.seconds, 1),
    }


def llm_tokens(workspace: Workspace, run_id: str) -> int:
    """Prompt + completion tokens of every LLM call made while answering run `run_id`."""
    total = 0
    for path in workspace.partitions("llm_calls"):
        if path.stem.endswith(f"__answer-{run_id}"):
            calls = pd.read_parquet(path, columns=["prompt_tokens", "completion_tokens"])
            total += int(calls.fillna(0).sum().sum())
    return total


def _mean(values: pd.Series) -> float | None:
    values = values.dropna().astype(float)
    return round(float(values.mean()), 4) if len(values) else None


def result_rows(
    ablation_id: str, setting: str, report: EvalReport, workspace: Workspace, samples: int, tokens: int
) -> list[dict[str, Any]]:
    """`ablation_results` rows: the benchmark ('*') and each question type."""
    rows = []
    frame = report.rows[report.rows["status"] == "answered"]
    groups = [("*", frame, report.protocol)] + [
        (q, frame[frame["qtype"].fillna("(none)") == q], p)
        for q, p in sorted(report.by_qtype_protocol.items())
    ]
    questions_total = max(1, frame["qid"].nunique())
    for qtype, group, protocol in groups:
        first = group[group["sample"] == 0]
        latency = first["latency_ms"].dropna().astype(float).to_numpy()
        rows.append(
            {
                "ablation_id": ablation_id,
                "setting": setting,
                "benchmark": report.benchmark,
                "qtype": qtype,
                "run_id": report.run_id,
                "workspace": workspace.root.name if setting in str(workspace.root) else "base",
                "n": int(first["qid"].nunique()),
                "samples": samples,
                "offline": bool(protocol.get("offline", True)),
                "overall": protocol.get("overall"),
                "overall_source": protocol.get("overall_source"),
                "pass_at_k": protocol.get("pass_at_k"),
                "evidence_recall": _mean(first["evidence_recall"]),
                "llm_tokens_per_q": round(tokens / questions_total, 1) if qtype == "*" else None,
                "evidence_tokens_mean": _mean(first["evidence_tokens"]),
                "latency_ms_p50": round(float(np.percentile(latency, 50)), 2) if latency.size else None,
                "latency_ms_mean": round(float(latency.mean()), 2) if latency.size else None,
            }
        )
    return rows


def ablation_id_for(
    questions: list[Path], settings: Settings, names: list[str], limit: int | None, samples: int, system: str
) -> str:
    contents = [sha256_bytes(p.read_bytes()) for p in questions]
    judging = settings.evaluate.model_dump(mode="json", exclude={"judge_url"})
    judging["judged"] = bool(settings.evaluate.judge_url or settings.llm.url)
    identity = (answering_identity(settings), judging)
    key = stable_hash("ablate", contents, identity, names, limit, samples, system)
    return f"abl_{key}"


def shared_embedder_factory(settings: Settings) -> Callable:
    """One embedder per identity for every setting of the grid (MiniLM loads once, not per setting)."""
    loaded: dict[str | None, Any] = {}
    lock = threading.Lock()

    def factory(identity: str | None):
        with lock:  # settings answer in parallel threads: load each model once
            if identity not in loaded:
                loaded[identity] = embedder_for_identity(identity, settings.embed_texts)
            return loaded[identity]

    return factory
