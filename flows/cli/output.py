"""How command results are shown: plain-text tables, answers with citations, build reports."""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from typing import Any

import pyarrow as pa

from tasks.query.answer_types import Answer
from tasks.tables.io import Workspace, read_frame
from tasks.tables.printable import is_json_field
from tasks.terminal import safe_text


def json_value(value: Any) -> Any:
    """A query cell as plain JSON: NaN/Infinity become null; dates, times, decimals and bytes become text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _json(value: Any) -> str:
    return json.dumps(json_value(value), ensure_ascii=False, allow_nan=False)


def _cell(value: Any, width: int = 60) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict, tuple)):
        value = _json(value)
    text = safe_text(" ".join(str(value).split()))  # data never reaches a terminal as a control sequence
    return text if len(text) <= width else text[: width - 1] + "…"


def _nested_back(table: pa.Table, rows: list[dict]) -> list[dict]:
    """Rows with the JSON text of nested columns DuckDB wrote (`tasks.tables.printable`) parsed back."""
    names = [field.name for field in table.schema if is_json_field(field)]
    for row in rows if names else []:
        for name in names:
            row[name] = None if row[name] is None else json.loads(row[name])
    return rows


def format_table(table: pa.Table, fmt: str = "table", max_rows: int = 200) -> str:
    """Query results as an aligned text table, CSV, or a JSON list of row objects."""
    rows = table.to_pylist()
    if fmt == "json":
        rows = _nested_back(table, rows)
        return json.dumps(json_value(rows), ensure_ascii=False, indent=1, allow_nan=False)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=table.column_names)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {k: (_json(v) if isinstance(v, (list, dict, tuple)) else v) for k, v in row.items()}
            )
        return buffer.getvalue().rstrip("\n")
    shown = rows[:max_rows]
    columns = [safe_text(name, one_line=True) for name in table.column_names]
    cells = [[_cell(value) for value in row.values()] for row in shown]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    more = f" (showing {len(shown)}; use --format csv/json for all)" if len(rows) > len(shown) else ""
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''}){more}")
    return "\n".join(lines)


# A Python dict literal inside a note ("board {'passages': 10}"): shown as words, never as a repr.
_DICT_LITERAL = re.compile(r"\{[^{}]*\}")


def _readable_dict(match: re.Match[str]) -> str:
    try:
        value = ast.literal_eval(match.group())
    except (ValueError, SyntaxError):
        return match.group()
    if not isinstance(value, dict):
        return match.group()
    return ", ".join(f"{str(key).replace('_', ' ')} {item}" for key, item in value.items())


def readable_note(note: str) -> str:
    """One answer note for people: any dict it quotes as `key value` pairs."""
    return _DICT_LITERAL.sub(_readable_dict, note)


def answer_text(answer: Answer, show_trace: bool = False, show_notes: bool = False) -> str:
    """The answer and its cited sections first; the tool calls with `show_trace`, the notes with
    `show_notes` (`--verbose`)."""
    mode = "offline — extractive answer, no LLM" if answer.is_offline else "LLM"
    lines = [f"Answer ({answer.system}, {mode}):", f"  {answer.answer}"]
    if answer.answer_kind == "sentence":
        lines.append("  (no short answer of the asked type was found: this is the best supporting sentence)")
    elif answer.answer_kind and answer.answer_kind != "option" and answer.citations:
        first = answer.citations[0]
        lines.append(
            f"  ({answer.answer_kind} answer; supported by “{first.quote}” "
            f"— [{first.ordinal}] {first.heading})"
        )
    if answer.options:
        lines.append("Options:")
        for i, option in enumerate(answer.options):
            mark = "→" if i == answer.chosen_option else " "
            score = f"  (support {answer.option_scores[i]:.3f})" if answer.option_scores else ""
            lines.append(f"  {mark} {chr(65 + i)}. {option}{score}")
    lines.append("Cited sections:")
    for citation in answer.citations:
        # a sentence the model wrote from quotes of several scenes names them all
        scenes = ", ".join(str(o) for o in citation.ordinals) or str(citation.ordinal)
        lines.append(f"  [{scenes}] {citation.heading}")
        lines.append(f"      “{citation.quote}”")
    lines.append(
        f"Evidence: {len(answer.evidence)} passages, {answer.evidence_tokens} tokens; "
        f"{answer.latency_ms:.0f} ms"
    )
    if show_trace:
        lines.append("Trace:")
        for i, call in enumerate(answer.trace):
            error = f"  ERROR: {call['error']}" if call.get("error") else ""
            lines.append(
                f"  #{i} round {call.get('round', 0)} {call['tool']}"
                f"({json.dumps(call.get('arguments', {}), ensure_ascii=False)})"
                f" -> {call.get('rows')} rows, {call.get('ms')} ms{error}"
            )
    if show_notes:
        lines.extend(f"note: {readable_note(note)}" for note in answer.notes)
    return "\n".join(lines)


def build_json(report) -> dict[str, Any]:
    return {
        **report.summary(),
        "used_prefect": report.used_prefect,
        "notices": report.notices,
        "ingest_failures": report.ingest_failures,
        "removed_documents": report.removed,
        "documents": [
            {
                "doc_id": d.doc_id,
                "title": d.title,
                "stages": [
                    {
                        "stage": o.stage,
                        "status": o.status,
                        "rows": o.rows,
                        "seconds": round(o.seconds, 3),
                        "error": o.error,
                        "warnings": o.warnings,
                        "lost_items": o.lost_items,
                    }
                    for o in d.outcomes
                ],
            }
            for d in report.documents
        ],
    }


def build_text(report, workspace: Workspace) -> str:
    summary = report.summary()
    lines = [f"workspace {workspace.root}"]
    lines.extend(f"notice: {n}" for n in report.notices)
    for failure in report.ingest_failures:
        lines.append(f"not ingested: {failure['item_id']}: {failure['error']}")
    for document in report.documents:
        failed = [o for o in document.outcomes if o.status == "failed"]
        for outcome in failed:
            lines.append(f"failed: {document.doc_id} {outcome.stage}: {outcome.error}")
    nothing_ran = summary["built"] == summary["partial"] == summary["failed"] == 0
    everything_skipped = nothing_ran and summary["documents"] > 0
    status = (
        "every stage up to date (all skipped)"
        if everything_skipped
        else f"{summary['built']} stage runs built, {summary['partial']} partial, "
        f"{summary['skipped']} skipped, "
        f"{summary['failed']} failed"
    )
    lines.append(f"{summary['documents']} document(s): {status} in {summary['seconds']:.1f} s")
    if summary["partial"]:
        stages = sorted({o.stage for d in report.documents for o in d.outcomes if o.status == "partial"})
        lines.append(
            f"INCOMPLETE: {summary['lost_items']} item(s) lost in {summary['partial']} stage run(s) "
            f"({', '.join(stages)}): the LLM server did not answer; run the same `nkw build` again "
            "(or `nkw build --retry-failed -w ...`) to retry exactly those items"
        )
    if report.removed:
        lines.append(
            f"pruned {len(report.removed)} document(s) not in the inputs: {', '.join(report.removed[:10])}"
            + (" ..." if len(report.removed) > 10 else "")
        )
    if report.ingest_failures:
        lines.append(
            f"INCOMPLETE: {len(report.ingest_failures)} input(s) not ingested (listed above with the reason)"
        )
    if not report.ok:
        lines.append("see `nkw inspect --workspace ...` for the failures table")
    return "\n".join(lines)


def document_ids(workspace: Workspace) -> list[str]:
    return [str(d) for d in read_frame(workspace, "documents", columns=["doc_id"])["doc_id"]]


def only_document(workspace: Workspace) -> str | None:
    """The document id when the workspace holds exactly one document."""
    documents = document_ids(workspace)
    return documents[0] if len(documents) == 1 else None
