"""Arguments as given (found by the fuzz pass, tests/security/test_fuzz_cli.py): text that is not
UTF-8, a file name the system refuses as too long, and an unknown flag holding a control sequence
each end in one line and exit 2, before any command reaches DuckDB, Parquet or the terminal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flows.cli.main import main
from tests.conftest import REPO

NOT_UTF8 = os.fsdecode(b"\xff\xfe")  # how Python hands over argv bytes that are not UTF-8


def run(capsys, *argv: str) -> tuple[int, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse refusals
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, named",
    [
        (["sql", f"SELECT '{NOT_UTF8}'", "-w", "{ws}"], "QUERY"),
        (["ask", f"who {NOT_UTF8}?", "-w", "{ws}"], "QUESTION"),
        (["remove", f"doc{NOT_UTF8}", "-w", "{ws}"], "DOC_IDS"),
        (["eval", "-w", "{ws}", "--questions", "q.jsonl", "--benchmark", NOT_UTF8], "--benchmark"),
        (["report", "-w", "{ws}", "--out", "o", "--run", "r", "--run", NOT_UTF8], "--run"),
        (["view", "-w", "{ws}", "--doc", NOT_UTF8, "--out", "o"], "--doc"),
    ],
)
def test_text_that_is_not_utf8_is_refused_by_name(argv, named, tmp_path, capsys):
    code, err = run(capsys, *(a.replace("{ws}", str(tmp_path)) for a in argv))
    assert code == 2
    assert err.strip() == f"error: {named} is not valid UTF-8 text"


def test_paths_may_hold_any_bytes(tmp_path):
    # In a process of its own: stderr shows such bytes escaped, where pytest's capture would refuse them.
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", "inspect", "-w", os.fsencode(tmp_path) + b"/ws\xff"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and b"no workspace at" in done.stderr and b"UTF-8" not in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "-w", "{long}"],
        ["sql", "SELECT 1", "-w", "{long}"],
        ["report", "-w", "{ws}", "--out", "{long}/sub"],
        ["inspect", "-w", "{ws}/" + "b/" * 2100],
    ],
)
def test_a_file_name_too_long_is_one_line_naming_it(argv, tmp_path, capsys):
    (tmp_path / "tables").mkdir()
    (tmp_path / "manifest").mkdir()
    long = str(tmp_path / ("a" * 300))
    code, err = run(capsys, *(a.replace("{long}", long).replace("{ws}", str(tmp_path)) for a in argv))
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: file name too long: "), err
    assert "characters)" in lines[0] and len(lines[0]) < 200


def test_an_unknown_flag_is_echoed_without_its_control_sequence(capsys):
    code, err = run(capsys, "sql", "SELECT 1", "-w", "ws", "--\x1b[2J")
    assert code == 2
    assert "\x1b" not in err and "\\x1b[2J" in err


@pytest.mark.parametrize("command", ["eval", "ablate"])
@pytest.mark.parametrize("samples", ["0", "101", "9223372036854775807"])
def test_samples_have_a_bound_so_an_evaluation_ends(command, samples, tmp_path, capsys):
    (tmp_path / "tables").mkdir()
    (tmp_path / "manifest").mkdir()
    questions = REPO / "data" / "samples" / "the_lighthouse_key.questions.jsonl"
    code, err = run(capsys, command, "-w", str(tmp_path), "--questions", str(questions), "--samples", samples,
                    "--no-prefect", "--embeddings", "hashing")  # fmt: skip
    assert code == 2 and err.strip() == f"error: --samples must be between 1 and 100 (got {samples})"


@pytest.mark.parametrize("price", ["nan", "inf", "-1"])
def test_a_price_that_is_not_finite_or_negative_is_refused(price, tmp_path, capsys):
    sample = REPO / "data" / "samples" / "the_lighthouse_key.txt"
    code, err = run(capsys, "build", str(sample), "-w", str(tmp_path / "ws"), "--dry-run",
                    "--price-per-million", price, "--no-prefect")  # fmt: skip
    assert code == 2 and "--price-per-million must be a finite price of 0 or more" in err
