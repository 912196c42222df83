"""`nkw ask` as a person reads it: the answer and its cited sections first, the notes and start-up
times only with --verbose, and no Python repr anywhere; `--json` keeps every note as it was."""

from __future__ import annotations

import json
import re

import pytest

from flows.cli.main import main
from flows.cli.output import readable_note

QUESTION = ["--doc", "the_lighthouse_key", "Who hides the brass key in the van?"]
# A dict or list printed by Python: `{'passages': 10}`, `['a', 'b']`, `{"a": 1}`.
REPR = re.compile(r"[{\[]\s*['\"][^'\"]*['\"]\s*[:,]")


def _ask(capsys, workspace, *extra: str) -> tuple[str, str]:
    assert main(["ask", "-w", str(workspace.root), *QUESTION, *extra]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_the_answer_and_citations_come_first_and_the_notes_wait_for_verbose(capsys, sample_workspace):
    out, err = _ask(capsys, sample_workspace)
    lines = out.splitlines()
    assert lines[0].startswith("Answer (nkw, offline") and lines[1].strip()
    assert "Cited sections:" in out and "note:" not in out and "start-up" not in err
    verbose, verbose_err = _ask(capsys, sample_workspace, "--verbose")
    assert verbose.startswith(out.rstrip("\n").split("Evidence:")[0])  # the same head, notes after it
    notes = [line for line in verbose.splitlines() if line.startswith("note: ")]
    assert notes and verbose.index("note: ") > verbose.index("Cited sections:")
    assert "start-up" in verbose_err
    for text in (out, err, verbose, verbose_err):
        assert not REPR.search(text), text


def test_json_keeps_every_note_unchanged(capsys, sample_workspace):
    out, _ = _ask(capsys, sample_workspace, "--json")
    answer = json.loads(out)
    assert answer["answer"] and answer["citations"] and answer["notes"]
    assert any("board {'" in note for note in answer["notes"])  # as the engine wrote it


@pytest.mark.parametrize(
    "note, shown",
    [
        ("board {'entity_items': 3, 'passages': 10}; stopped", "board entity items 3, passages 10; stopped"),
        ("evidence [1] Part 1: “No,” said he.", "evidence [1] Part 1: “No,” said he."),
        ("a set {1, 2} and a brace {", "a set {1, 2} and a brace {"),
    ],
)
def test_a_note_shows_dicts_as_words_and_leaves_the_rest(note, shown):
    assert readable_note(note) == shown
