"""The questions file of an evaluation: read and validated as a whole before anything is answered,
its documents checked against the workspace, and a document's share read back by a task."""

from __future__ import annotations

from pathlib import Path

from flows.evaluation.question_budget import question_budget
from flows.evaluation.question_checks import describe_problems, read_lines, validate_questions
from schemas.ids import sha256_bytes
from tasks.evaluate.metrics import Question
from tasks.ingest.read_input import InputRefused
from tasks.tables.confine import describe as describe_link
from tasks.tables.confine import escaping_links
from tasks.tables.io import Workspace, read_frame


class QuestionFileError(ValueError):
    """A questions file that cannot be read."""


def load_questions(path: Path) -> list[Question]:
    """Every question of the file, validated as a whole before anything is answered."""
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError, InputRefused) as exc:
        raise QuestionFileError(f"cannot read questions file {path}: {exc}") from None
    questions, problems = validate_questions(lines, path.name)
    if problems:
        raise QuestionFileError(describe_problems(problems))
    if not questions:
        raise QuestionFileError(f"{path} has no questions")
    return questions


def check_documents(workspace: Workspace, questions: list[Question]) -> None:
    """Refuse a run none of whose questions' documents are in the workspace (it would score n=0),
    or a workspace with a folder linked outside it (its answers would be written there)."""
    links = escaping_links(workspace.root)
    if links:
        raise QuestionFileError(describe_link(workspace.root, links[0]))
    present = set(read_frame(workspace, "documents", columns=["doc_id"])["doc_id"])
    wanted = sorted({q.doc_id for q in questions})
    if not present & set(wanted):
        listed = ", ".join(wanted[:5]) + (f" and {len(wanted) - 5} more" if len(wanted) > 5 else "")
        raise QuestionFileError(
            f"none of the questions' documents ({listed}) are in workspace "
            f"{workspace.root.name!r}; "
            "build them first (see `nkw inspect`)"
        )


def document_questions(path: Path, sha256: str, doc_id: str, limit: int | None) -> list[Question]:
    """The questions of one document, read by a task from the questions file it was given by reference."""
    if sha256_bytes(path.read_bytes()) != sha256:
        raise QuestionFileError(f"{path} changed while it was being evaluated")
    return [q for q in question_budget(load_questions(path), limit) if q.doc_id == doc_id]


def benchmark_name(path: Path) -> str:
    return path.parent.name if path.stem == "questions" else path.stem.replace(".questions", "")
