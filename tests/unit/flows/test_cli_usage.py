"""Usage errors as people expect them: each command's own usage, the unknown flag named (not the
value after it), the nearest flag or command suggested; and help that loads no command's modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from flows.cli.main import main
from flows.cli.parser import nearest, unrecognized
from tests.conftest import REPO

# What a command's modules bring in; none of it is needed to parse arguments or print help.
HEAVY = ("pandas", "pyarrow", "numpy", "torch", "prefect", "duckdb", "fastapi", "pydantic", "httpx")


def _usage_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, usage, named, hint",
    [
        (["sql", "--fromat", "csv", "SELECT 1", "-w", "ws"], "usage: nkw sql", "--fromat", "--format"),
        (["ask", "Who?", "-w", "ws", "--tracee"], "usage: nkw ask", "--tracee", "--trace"),
        (["build", "x.txt", "-w", "ws", "--no-prefekt"], "usage: nkw build", "--no-prefekt", "--no-prefect"),
        (["llm", "check", "--llm-ulr", "http://x/v1"], "usage: nkw llm check", "--llm-ulr", "--llm-url"),
    ],
)
def test_a_misspelt_flag_gets_the_commands_usage_and_the_nearest_flag(capsys, argv, usage, named, hint):
    err = _usage_error(capsys, argv)
    assert err.startswith(usage)
    line = err.strip().splitlines()[-1]
    assert f"unrecognized argument {named}; did you mean {hint}?" in line
    assert "SELECT 1" not in line  # the query after `--fromat csv` is not what was wrong


def test_a_misspelt_command_or_choice_gets_the_nearest_one(capsys):
    assert "did you mean build?" in _usage_error(capsys, ["biuld"])
    err = _usage_error(capsys, ["sql", "--format", "tabel", "SELECT 1", "-w", "ws"])
    assert err.startswith("usage: nkw sql") and "did you mean table?" in err
    assert "did you mean" not in _usage_error(capsys, ["zzzzzz"])  # nothing near: no guess


def test_unrecognized_names_flags_before_values_and_suggests_only_long_flags():
    assert unrecognized(["--fromat", "SELECT 1"], ["--format", "-f"]).startswith(
        "unrecognized argument --fromat;"
    )
    assert unrecognized(["SELECT 2"], ["--format"]) == "unrecognized argument SELECT 2"
    assert unrecognized(["--foo=1"], ["--format"]) == "unrecognized argument --foo=1"
    assert nearest("--jsno", ["--json", "--debug"]) == "--json"


@pytest.mark.parametrize("argv", [["--help"], ["ask", "--help"], ["sql", "--fromat", "csv", "SELECT 1"]])
def test_help_and_usage_errors_import_no_command_module(argv):
    probe = (
        "import json, sys\n"
        "from flows.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert loaded == [], done.stderr
    assert "usage: nkw" in done.stdout + done.stderr
