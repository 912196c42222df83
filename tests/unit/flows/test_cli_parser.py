"""The `nkw` parser behaves like the command lines people know: help on a bare `nkw`, a misspelt flag
named as such, help text on every flag, `--json` on every command that prints data."""

from __future__ import annotations

import argparse

import pytest

from flows.cli.main import build_parser, main

# Commands whose output is not data: a server and the `llm` group (its `check` has --json).
NO_DATA = {"serve", "llm"}


def parsers(parser: argparse.ArgumentParser, prefix: str = "nkw"):
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, f"{prefix} {name}")


def test_every_flag_and_argument_has_help():
    missing = [
        f"{name} {'/'.join(action.option_strings) or action.dest}"
        for name, parser in parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []


def test_every_command_that_prints_data_takes_json():
    commands = {name: p for name, p in parsers(build_parser()) if name.count(" ") >= 1}
    without = [
        name
        for name, parser in commands.items()
        if name.split()[-1] not in NO_DATA and not any("--json" in a.option_strings for a in parser._actions)
    ]
    assert len(commands) >= 12 and without == []


def test_bare_nkw_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: nkw") and "build" in out and "report" in out
    assert main(["llm"]) == 0
    assert "check" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["eval", "-w", "ws", "--questoins", "q.jsonl"], "--questoins"),  # a required flag misspelt
        (["eval", "-w", "ws", "--questions", "q.jsonl", "--foo"], "--foo"),
        (["report", "--foo=1", "-w", "ws"], "--foo=1"),
        (["sql", "-w", "ws", "SELECT 1", "--bar"], "--bar"),
    ],
)
def test_an_unknown_flag_is_named_not_reported_as_a_missing_one(capsys, argv, flag):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert f"error: unrecognized argument {flag}" in err and "required" not in err


def test_a_missing_required_flag_is_still_reported_as_missing(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "-w", "ws"])
    assert "the following arguments are required: --questions" in capsys.readouterr().err


def test_sql_json_is_format_json_and_out_is_a_folder_everywhere():
    parser = build_parser()
    assert parser.parse_args(["sql", "-w", "ws", "SELECT 1", "--json"]).format == "json"
    assert parser.parse_args(["sql", "-w", "ws", "SELECT 1"]).format == "table"
    for name, sub in parsers(parser):
        for action in sub._actions:
            if "--out" in action.option_strings:
                assert action.metavar == "DIR" and "folder" in action.help, name
