"""`nkw inspect`: rows per table and per document, stage status from the manifest, failures,
and LLM usage per stage — all read through the DuckDB views."""

from __future__ import annotations

from typing import Any

from tasks.tables.manifest import list_manifests
from flows.stages import STAGES_BY_NAME
from schemas.tables import TABLES
from tasks.hierarchy.stats import hierarchy_statistics
from tasks.tables.io import Workspace, read_frame
from tasks.tables import ledger
from tasks.tables.warehouse import connect, load_sql, table_files

PER_DOCUMENT_COLUMNS = ("sections", "chunks", "sentences")
HIERARCHY_TABLES = ("episodes", "episode_relations", "storylines", "storyline_relations")


def _rows(con, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _partition_check(workspace: Workspace, checked: ledger.Verification) -> dict[str, Any]:
    def relative(paths: list) -> list[str]:
        return [str(p.relative_to(workspace.root)) for p in paths]

    return {
        "verified": ledger.has_ledger(workspace.root),
        "trusted": len(checked.trusted),
        "unknown": relative(checked.unknown),
        "altered": relative(checked.altered),
    }


def inspect_json(workspace: Workspace) -> dict[str, Any]:
    files, checked = table_files(workspace)
    con = connect(workspace, files=files)
    try:
        table_rows = {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchall()[0][0] for name in TABLES}
        documents = _rows(con, load_sql("inspect_documents"))
        per_document: dict[str, dict[str, int]] = {d["doc_id"]: {} for d in documents}
        for name, table_spec in TABLES.items():
            if table_spec.partition != "document" or not table_rows[name]:
                continue
            for doc_id, count in con.execute(
                f'SELECT doc_id, count(*) FROM "{name}" GROUP BY doc_id'
            ).fetchall():
                per_document.setdefault(doc_id, {})[name] = count
        failures = _rows(con, load_sql("inspect_failures"))
        llm_usage = _rows(con, load_sql("llm_usage_by_stage"))
        assets = {row.pop("doc_id"): row for row in _rows(con, load_sql("asset_statistics"))}
        section_kinds: dict[str, dict[str, int]] = {}
        if table_rows.get("sections"):
            by_kind = 'SELECT doc_id, section_kind, count(*) FROM "sections" GROUP BY doc_id, section_kind'
            for doc_id, kind, count in con.execute(by_kind).fetchall():
                section_kinds.setdefault(doc_id, {})[kind] = count
    finally:
        con.close()
    stages: dict[str, dict[str, Any]] = {
        name: {"built": 0, "partial": 0, "failed": 0, "seconds": 0.0} for name in STAGES_BY_NAME
    }
    stale: dict[str, dict[str, str]] = {}  # documents whose rows are not all current: stage -> why
    for manifest in list_manifests(workspace):
        not_current = {
            name: record.error or record.status
            for name, record in manifest.stages.items()
            if record.status in ("failed", "stale")
        }
        if not_current:
            stale[manifest.doc_id] = not_current
        for name, record in manifest.stages.items():
            counts = stages.setdefault(name, {"built": 0, "failed": 0, "seconds": 0.0})
            counts.setdefault("partial", 0)
            counts[record.status] = counts.get(record.status, 0) + 1
            counts["seconds"] = round(counts["seconds"] + record.seconds, 2)
    segmentation = {}
    for manifest in list_manifests(workspace):
        record = manifest.stages.get("segment_sections")
        notes = list(record.details.get("warnings", [])) if record else []
        kinds = section_kinds.get(manifest.doc_id, {})
        if kinds or notes:
            segmentation[manifest.doc_id] = {"section_kinds": kinds, "notes": notes}
    hierarchy = {
        d["doc_id"]: hierarchy_statistics(*(read_frame(workspace, t, d["doc_id"]) for t in HIERARCHY_TABLES))
        for d in documents
    }
    return {
        "workspace": str(workspace.root),
        "tables": table_rows,
        "documents": documents,
        "rows_per_document": per_document,
        "stages": stages,
        "stale": stale,
        "failures": failures,
        "llm_usage": llm_usage,
        "assets": assets,
        "hierarchy": hierarchy,
        "partitions": _partition_check(workspace, checked),
        "segmentation": segmentation,
    }


def _statistics_lines(title: str, per_document: dict[str, dict[str, Any]]) -> list[str]:
    if not per_document:
        return []
    columns = list(next(iter(per_document.values())))
    short = [c.replace("_", " ") for c in columns]
    widths = [max(6, len(c)) for c in short]
    lines = [
        "",
        f"{title}:",
        "  " + f"{'document':<28} " + " ".join(c.rjust(w) for c, w in zip(short, widths)),
    ]
    for doc_id, values in per_document.items():
        cells = [
            (f"{values[c]:.2f}" if isinstance(values[c], float) else str(values[c])).rjust(w)
            for c, w in zip(columns, widths)
        ]
        lines.append(f"  {doc_id[:28]:<28} " + " ".join(cells))
    return lines


def _partition_lines(check: dict[str, Any]) -> list[str]:
    if not check["verified"]:
        return ["", "partitions: unverified (workspace built before the partition ledger)"]
    lines = ["", f"partitions: {check['trusted']} verified against the ledger"]
    for path in check["unknown"]:
        lines.append(f"  UNKNOWN (not written by a build; not read): {path}")
    for path in check["altered"]:
        lines.append(f"  ALTERED (content differs from what was written; not read): {path}")
    return lines


def inspect_text(workspace: Workspace) -> str:
    data = inspect_json(workspace)
    lines = [f"workspace {data['workspace']}", "", "tables (rows):"]
    lines += [f"  {name:<22} {count:>9,}" for name, count in data["tables"].items()]
    lines += ["", "documents:"]
    for document in data["documents"]:
        counts = data["rows_per_document"].get(document["doc_id"], {})
        parts = ", ".join(f"{counts.get(c, 0)} {c}" for c in PER_DOCUMENT_COLUMNS)
        mark = "  STALE" if document["doc_id"] in data["stale"] else ""
        lines.append(
            f"  {document['doc_id'][:40]:<40} {document['kind']:<10} {document['language']} "
            f"{document['n_words']:>8,} words  {parts}  — {document['title']}{mark}"
        )
    if data["stale"]:
        lines += [
            "",
            "stale documents (a stage failed; rows of the stages below were withdrawn until a rebuild):",
        ]
        for doc_id, not_current in data["stale"].items():
            lines.append(
                f"  {doc_id[:40]:<40} " + "; ".join(f"{k}: {v[:60]}" for k, v in not_current.items())[:300]
            )
    noted = {doc_id: seg for doc_id, seg in data["segmentation"].items() if seg["notes"]}
    if noted:
        lines += ["", "segmentation notes:"]
        for doc_id, seg in noted.items():
            lines += [f"  {doc_id[:40]:<40} {note}" for note in seg["notes"]]
    lines += ["", "stages (documents built / partial / failed, total seconds):"]
    for name, counts in data["stages"].items():
        if not any(counts.get(k) for k in ("built", "failed", "partial", "stale")):
            continue
        stale_count = f" {counts['stale']:>4} stale" if counts.get("stale") else ""
        lines.append(
            f"  {name:<24} {counts.get('built', 0):>4} built {counts.get('partial', 0):>4} partial "
            f"{counts.get('failed', 0):>4} failed{stale_count} {counts['seconds']:>9.1f} s"
        )
    partial = sum(counts.get("partial", 0) for counts in data["stages"].values())
    if partial:
        lines.append(
            f"  partial: {partial} stage run(s) lost LLM items; `nkw build` again retries exactly those items"
        )
    lines += _partition_lines(data["partitions"])
    lines += _statistics_lines("assets per document (paper table B.8)", data["assets"])
    lines += _statistics_lines("narrative hierarchy per document (paper tables B.8-B.9)", data["hierarchy"])
    lines += ["", f"failures: {len(data['failures'])}"]
    for failure in data["failures"][:20]:
        lines.append(
            f"  {failure['doc_id'][:30]:<30} {failure['stage']:<22} {failure['item_id'][:30]:<30} "
            f"{failure['error'][:100]}"
        )
    if data["llm_usage"]:
        lines += ["", "LLM calls per stage:"]
        for usage in data["llm_usage"]:
            lines.append(
                f"  {usage['stage']:<24} {usage['calls']:>6} calls {usage['cached']:>6} cached "
                f"{usage['prompt_tokens'] or 0:>10,} in {usage['completion_tokens'] or 0:>9,} out  "
                f"failed {usage['failed']}"
            )
    return "\n".join(lines)
