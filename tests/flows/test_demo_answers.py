"""`make demo`'s two questions answered right on the bundled samples, through `nkw ask`: the
who-question with the character's canonical name and its supporting quote and scene, and the
multiple-choice question with per-option evidence and verdicts in the notes; notes name
entities, while the JSON keeps their ids."""

from __future__ import annotations

import json

from flows.cli.main import main

DEMO_OPTIONS = ["A golden ring", "A talking flounder", "An old boot", "A silver fish"]


def ask(capsys, workspace, doc: str, question: str, *extra: str) -> tuple[int, str]:
    code = main(["ask", "-w", str(workspace.root), "--embeddings", "hashing", "--doc", doc, question, *extra])
    return code, capsys.readouterr().out


def test_demo_who_question_names_the_character(capsys, sample_workspace):
    code, out = ask(
        capsys, sample_workspace, "the_lighthouse_key", "Who hides the brass key in the van?", "--json"
    )
    answer = json.loads(out)
    assert code == 0 and answer["answer"] == "Tom Hale" and answer["answer_kind"] == "who"
    assert answer["citations"][0]["heading"] == "INT./EXT. VAN - DAY"
    assert "brass key" in answer["citations"][0]["quote"]
    assert all(entity.startswith("rent_") for entity in answer["intents"]["entities"])  # ids kept for --json
    code, out = ask(
        capsys, sample_workspace, "the_lighthouse_key", "Who hides the brass key in the van?", "--verbose"
    )
    assert "  Tom Hale\n" in out and "(who answer; supported by" in out and "VAN - DAY" in out
    assert "rent_" not in out and "about brass key" in out  # notes print names, not internal ids


def test_demo_multiple_choice_picks_the_flounder_with_per_option_records(capsys, sample_workspace):
    options = [arg for option in DEMO_OPTIONS for arg in ("--option", option)]
    code, out = ask(
        capsys,
        sample_workspace,
        "the_fisherman_and_his_wife",
        "What did the fisherman catch?",
        *options,
        "--json",
    )
    answer = json.loads(out)
    assert code == 0 and answer["answer"] == "A talking flounder" and answer["chosen_option"] == 1
    assert answer["answer_kind"] == "option" and len(answer["option_scores"]) == 4
    option_notes = [n for n in answer["notes"] if n.startswith("option ")]
    assert [n[:8] for n in option_notes] == ["option A", "option B", "option C", "option D"]
    assert (
        sum(n.strip().startswith("evidence [") for n in answer["notes"]) == 4
    )  # one quoted sentence per option
    assert max(answer["option_scores"]) == answer["option_scores"][1]
