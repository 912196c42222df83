"""Judge one evaluation run's free-form answers and store every vote (`judgments`), reusing the
votes already stored for the run unless `fresh`. Multiple-choice answers are scored by option
match and never sent to the judge. A whole-story question (tasks.query.question_scope: the plot, a
character's part, a theme) gets a long answer, which the rubric judge scores against every reference
the question has; any other free-form answer is labelled correct or not against its reference."""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.config import EvaluateSettings, Settings
from tasks.evaluate.judge import JudgeItem, judge_items
from tasks.evaluate.protocol import language_of
from tasks.evaluate.rubric import rubric_items
from tasks.llm.client.factory import build_llm_client
from tasks.query.question_scope import read_scope
from tasks.tables.io import Workspace, read_frame, write_table


def judge_targets(
    frame: pd.DataFrame, benchmark: str, references: dict[str, list[str]] | None = None
) -> list[JudgeItem]:
    """Answered free-form rows with a reference: what the judge reads. `references` holds every
    reference answer of a question (Question.references); a whole-story question is marked for the
    rubric with all of them."""
    items = []
    for row in frame.itertuples():
        refs = tuple(r for r in (references or {}).get(row.qid, []) if r.strip())
        if row.status != "answered" or not ((row.reference or "").strip() or refs):
            continue
        if row.gold_option is not None and not pd.isna(row.gold_option):
            continue
        items.append(
            JudgeItem(
                benchmark,
                row.qid,
                row.doc_id,
                int(row.sample),
                row.question,
                row.answer or "",
                row.reference or (refs[0] if refs else ""),
                language_of(row.question),
                references=refs or (row.reference,),
                rubric=read_scope(row.question).is_global,
            )
        )
    return items


def stored_judgments(workspace: Workspace, run_id: str) -> pd.DataFrame:
    """The run's stored votes; votes stored before the rubric existed are label votes."""
    stored = read_frame(workspace, "judgments", run_id)
    if not stored.empty:
        stored["kind"] = stored["kind"].fillna("label")
    return stored


def judge_run(
    workspace: Workspace,
    run_id: str,
    benchmark: str,
    frame: pd.DataFrame,
    client: Any,
    settings: EvaluateSettings,
    fresh: bool = False,
    references: dict[str, list[str]] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every vote of the run (stored ones kept, missing or failed ones asked again); writes `judgments`.
    A stored vote counts only for the kind of judgment its item now gets (label or rubric)."""
    items = judge_targets(frame, benchmark, references)
    kind = {(item.qid, item.sample): "rubric" if item.rubric else "label" for item in items}
    stored = pd.DataFrame() if fresh else stored_judgments(workspace, run_id)
    complete: set[tuple[str, int]] = set()
    if not stored.empty:
        stored = stored[stored["judge_model"] == client.model]
        usable = stored[stored["status"] != "failed"]
        keys = list(zip(usable["qid"], usable["sample"].astype(int)))
        usable = usable[[kind.get(key) == k for key, k in zip(keys, usable["kind"])]]
        counts = usable.groupby(["qid", "sample"])["vote"].nunique()
        complete = {(str(q), int(s)) for (q, s), n in counts.items() if n >= settings.judge_votes}
        stored = usable[[(q, int(s)) in complete for q, s in zip(usable["qid"], usable["sample"])]]
    todo = [item for item in items if (item.qid, item.sample) not in complete]
    votes, temperature = settings.judge_votes, settings.judge_temperature
    labelled = judge_items(client, run_id, [i for i in todo if not i.rubric], votes, temperature)
    scored = rubric_items(client, run_id, [i for i in todo if i.rubric], votes, temperature)
    rows, calls = labelled[0] + scored[0], labelled[1] + scored[1]
    kept = [
        r
        for r in (stored.to_dict("records") if not stored.empty else [])
        if (r["qid"], int(r["sample"])) in kind
    ]
    judgments = pd.DataFrame(kept + rows)
    write_table(workspace, "judgments", judgments if not judgments.empty else [], run_id)
    by_doc: dict[str, list[dict]] = {}
    for call in calls:
        by_doc.setdefault(call["doc_id"], []).append(call)
    for doc_id, doc_calls in by_doc.items():
        write_table(workspace, "llm_calls", doc_calls, doc_id, f"judge-{run_id}")
    stats = {
        "items": len(items),
        "rubric_items": sum(item.rubric for item in items),
        "reused": len(items) - len(todo),
        "judged": len(todo),
        "failed_votes": sum(1 for r in rows if r["status"] == "failed"),
    }
    return judgments, stats


def judge_client(settings: Settings, api_key: str | None, workspace: Workspace):
    """A separate client for the judge when `[evaluate].judge_url` or `judge_model` is set, else None
    (the caller then judges with the answering LLM, or not at all offline)."""
    judge = settings.evaluate
    if not judge.judge_url and not judge.judge_model:
        return None
    url = judge.judge_url or settings.llm.url
    if not url:
        return None
    llm = settings.llm.model_copy(update={"url": url, "model": judge.judge_model or settings.llm.model})
    return build_llm_client(llm, api_key, workspace.cache_dir / "llm")
