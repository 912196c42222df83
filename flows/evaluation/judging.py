"""Judge one evaluation run's free-form answers and store every vote (`judgments`), reusing the
votes already stored for the run unless `fresh`. Multiple-choice answers are scored by option
match and never sent to the judge."""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.config import EvaluateSettings, Settings
from tasks.evaluate.judge import JudgeItem, judge_items
from tasks.evaluate.protocol import language_of
from tasks.llm.client.factory import build_llm_client
from tasks.tables.io import Workspace, read_frame, write_table


def judge_targets(frame: pd.DataFrame, benchmark: str) -> list[JudgeItem]:
    """Answered free-form rows with a reference: what the judge reads."""
    items = []
    for row in frame.itertuples():
        if row.status != "answered" or not (row.reference or "").strip():
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
                row.reference,
                language_of(row.question),
            )
        )
    return items


def stored_judgments(workspace: Workspace, run_id: str) -> pd.DataFrame:
    return read_frame(workspace, "judgments", run_id)


def judge_run(
    workspace: Workspace,
    run_id: str,
    benchmark: str,
    frame: pd.DataFrame,
    client: Any,
    settings: EvaluateSettings,
    fresh: bool = False,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Every vote of the run (stored ones kept, missing or failed ones asked again); writes `judgments`."""
    items = judge_targets(frame, benchmark)
    stored = pd.DataFrame() if fresh else stored_judgments(workspace, run_id)
    complete: set[tuple[str, int]] = set()
    if not stored.empty:
        stored = stored[stored["judge_model"] == client.model]
        usable = stored[stored["status"] != "failed"]
        counts = usable.groupby(["qid", "sample"])["vote"].nunique()
        complete = {(str(q), int(s)) for (q, s), n in counts.items() if n >= settings.judge_votes}
        stored = usable[usable.apply(lambda r: (r["qid"], int(r["sample"])) in complete, axis=1)]
    todo = [item for item in items if (item.qid, item.sample) not in complete]
    rows, calls = (
        judge_items(client, run_id, todo, settings.judge_votes, settings.judge_temperature)
        if todo
        else ([], [])
    )
    wanted = {(item.qid, item.sample) for item in items}
    kept = [
        r
        for r in (stored.to_dict("records") if not stored.empty else [])
        if (r["qid"], int(r["sample"])) in wanted
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
