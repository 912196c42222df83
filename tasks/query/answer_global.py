"""The offline answer to a whole-story question: the summary hierarchy's quotes (tasks.query.tools.
summaries) joined in story order into a paragraph, each quote cited with its section."""

from __future__ import annotations

from typing import Callable

from tasks.query.reader.finalize import FinalAnswer
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow

KIND = "summary"
# Writes the answer from the quotes (env, question, quotes, the offline answer, words), as the LLM
# does (tasks.query.answer_global_llm); the offline answer when it cannot.
GlobalWriter = Callable[[ToolEnv, str, list[ToolRow], FinalAnswer, int], FinalAnswer]


def global_answer(rows: list[ToolRow], language: str, scope: str) -> FinalAnswer:
    """A paragraph of the quotes (rows already in story order), labelled offline."""
    notes = [
        f"offline: extractive answer from the summary hierarchy (no LLM); whole-story question ({scope}), "
        f"{len(rows)} quote(s) in story order"
    ]
    if not rows:
        return FinalAnswer("No answer found in the summary hierarchy.", notes=notes, kind=KIND)
    text = ("" if language == "zh" else " ").join(row.text.strip() for row in rows)
    quotes = [(str(row.section_id), row.text) for row in rows if row.section_id]
    return FinalAnswer(text, quotes=quotes, notes=notes, kind=KIND)
