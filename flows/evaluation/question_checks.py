"""Input checks of `nkw ask` and `nkw eval`, done before anything is answered.

A questions file is validated as a whole: every bad record is reported (one line each) and
nothing is answered, so a mistake on line 900 never costs the 899 answers before it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flows.stages import STAGES
from tasks.evaluate.metrics import Question
from tasks.ingest.read_input import read_text_lines
from tasks.tables.io import Workspace
from tasks.tables.manifest import load_manifest

MAX_LISTED = 40
MAX_QUESTIONS_BYTES = 256 << 20  # benchmark files are a few MB; a device or a sparse hole is refused


def question_problem(text: Any) -> str | None:
    """Why `text` is not a question (None when it is one): missing, empty, or only punctuation."""
    if not isinstance(text, str):
        return f"the question must be text, not {type(text).__name__ if text is not None else 'null'}"
    if not text.strip():
        return "the question is empty"
    if not any(ch.isalnum() for ch in text):
        return "the question has no words (only punctuation or symbols)"
    return None


def _record_problems(record: Any) -> list[str]:
    if not isinstance(record, dict):
        return [f"a question record is a JSON object, not {type(record).__name__}"]
    problems = []
    for key in ("qid", "doc_id"):
        value = record.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
            problems.append(f"{key!r} is missing or empty")
    problem = question_problem(record.get("question"))
    if problem:
        problems.append(problem)
    if record.get("answer") is not None and not isinstance(record["answer"], str):
        problems.append("'answer' must be text")
    options = record.get("options")
    if options is not None and (
        not isinstance(options, list) or not all(isinstance(o, str) and o.strip() for o in options)
    ):
        problems.append("'options' must be a list of non-empty strings")
        options = None
    gold = record.get("gold_option")
    if gold is not None:
        if isinstance(gold, bool) or not isinstance(gold, int):
            problems.append(f"'gold_option' must be an option index (an integer), not {json.dumps(gold)}")
        elif not options:
            problems.append("'gold_option' is given but there are no 'options'")
        elif not 0 <= gold < len(options):
            problems.append(
                f"'gold_option' {gold} is out of range for {len(options)} options (0..{len(options) - 1})"
            )
    for key, kind in (("qtype", str), ("meta", dict)):
        if record.get(key) is not None and not isinstance(record[key], kind):
            problems.append(f"{key!r} must be {'text' if kind is str else 'an object'}")
    return problems


def validate_questions(lines: list[str], name: str) -> tuple[list[Question], list[str]]:
    """Every question of a JSONL file, and one line per bad record (empty when all are good)."""
    questions: list[Question] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{name} line {number}: not JSON ({exc.msg})")
            continue
        except (ValueError, RecursionError) as exc:  # nested too deeply, a number too long
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
            problems.append(f"{name} line {number}: not JSON ({reason})")
            continue
        found = _record_problems(record)
        if not found:
            qid = str(record["qid"])
            if qid in seen:
                found.append(f"duplicate qid {qid!r} (first on line {seen[qid]})")
            seen.setdefault(qid, number)
        if found:
            problems.extend(f"{name} line {number}: {problem}" for problem in found)
        else:
            questions.append(Question.from_json(record))
    return questions, problems


def describe_problems(problems: list[str]) -> str:
    shown = problems[:MAX_LISTED]
    more = [f"... and {len(problems) - len(shown)} more"] if len(problems) > len(shown) else []
    return "\n".join([f"{len(problems)} bad question record(s); nothing was answered:", *shown, *more])


def build_gaps(workspace: Workspace, doc_id: str) -> str | None:
    """One line naming the stages of `doc_id` that are missing, partial or failed (None when complete)."""
    manifest = load_manifest(workspace, doc_id)
    gaps: dict[str, list[str]] = {}
    for stage in STAGES:
        record = manifest.stages.get(stage.name)
        status = "missing" if record is None else record.status
        if status != "built":
            gaps.setdefault(status, []).append(stage.name)
    if not gaps:
        return None
    parts = "; ".join(f"{status}: {', '.join(names)}" for status, names in gaps.items())
    return (
        f"document {doc_id!r} is not fully built ({parts}); answers may miss evidence — run `nkw build` again"
    )


def read_lines(path: Path) -> list[str]:
    """A questions file's lines: regular files of bounded size only (see tasks.ingest.read_input)."""
    return read_text_lines(path, MAX_QUESTIONS_BYTES, "questions file")
