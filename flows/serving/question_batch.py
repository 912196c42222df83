"""A file of questions for `nkw ask --questions FILE`: one plain question per line, or JSON lines
with `question` and optionally `doc_id` (or `doc`) and `options` (the shared benchmark format
works as is). Blank lines and lines starting with # are skipped."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.ingest.read_input import InputRefused, read_text_lines

MAX_QUESTIONS_BYTES = 64 << 20  # far more than any batch of questions; a device or a hole is refused


class QuestionBatchError(ValueError):
    """A questions file that cannot be read; the message names the line."""


def read_question_batch(path: Path) -> list[tuple[str | None, str, list[str] | None]]:
    """(document id or None, question, options or None) per question, in file order."""
    try:
        lines = read_text_lines(path, MAX_QUESTIONS_BYTES, "questions file")
    except (OSError, UnicodeDecodeError, InputRefused) as exc:
        raise QuestionBatchError(f"cannot read questions file {path}: {exc}") from None
    items: list[tuple[str | None, str, list[str] | None]] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if not text.startswith("{"):
            items.append((None, text, None))
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise QuestionBatchError(f"{path.name} line {number}: invalid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # nested too deeply, a number too long
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
            raise QuestionBatchError(f"{path.name} line {number}: invalid JSON ({reason})") from None
        if not isinstance(record, dict):
            raise QuestionBatchError(f"{path.name} line {number}: a question record is a JSON object")
        question = record.get("question")
        options = record.get("options")
        doc = record.get("doc_id", record.get("doc"))
        if not isinstance(question, str) or not question.strip():
            raise QuestionBatchError(f'{path.name} line {number}: no "question" text')
        if options is not None and (
            not isinstance(options, list)
            or len(options) < 2
            or not all(isinstance(o, str) and o.strip() for o in options)
        ):
            raise QuestionBatchError(
                f'{path.name} line {number}: "options" must be a list of at least two texts'
            )
        if doc is not None and not isinstance(doc, str):
            raise QuestionBatchError(f'{path.name} line {number}: "doc_id" must be text')
        items.append((doc, question.strip(), [o.strip() for o in options] if options else None))
    if not items:
        raise QuestionBatchError(f"{path} has no questions")
    return items
