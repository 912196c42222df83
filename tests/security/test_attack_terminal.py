"""Attack family "terminal safety": control sequences in data (ESC ] 0 ; title BEL, ESC [ 2 J, the
one-byte CSI U+009B) never reach the terminal in text meant for people; CSV and JSON keep them."""

from __future__ import annotations

import csv
import io
import json

import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace
from tasks.terminal import safe_text
from tests.faults.attack_kit import INGEST_ONLY, nkw_in_process

TITLE, CLEAR, CSI = "\x1b]0;pwned\x07", "\x1b[2J", "\x9b31m"
HOSTILE = f"{TITLE}{CLEAR}{CSI}"
QUERY = "SELECT chr(27) || ']0;pwned' || chr(7) || chr(27) || '[2J' || chr(155) || '31m' AS \"x\x1b[1m\""


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if c in "\x1b\x07\x9b\r"]


def test_safe_text_shows_controls_and_keeps_text():
    assert safe_text(HOSTILE) == "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m"
    assert safe_text("Mara 说\tok\nnext") == "Mara 说\tok\nnext"
    assert safe_text("a\nb\rc", one_line=True) == "a\\x0ab\\x0dc"


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("terminal")
    doc = root / f"evil{CLEAR}.txt"
    doc.write_text(f"Mara walked to the mill {TITLE}{CLEAR}. She found the key.\n\nTomas waited.\n")
    workspace = Workspace.at(root / "ws")
    assert main(["build", str(doc), "-w", str(workspace.root), *INGEST_ONLY]) == 0
    return workspace


def test_sql_table_format_prints_no_control_sequence(ws, capsys):
    result = nkw_in_process(capsys, "sql", QUERY, "-w", ws.root)
    assert result.code == 0, result.err
    assert not _raw_controls(result.out) and "\\x1b]0;pwned\\x07" in result.out


def test_sql_csv_and_json_keep_the_bytes(ws, capsys):
    result = nkw_in_process(capsys, "sql", QUERY, "-w", ws.root, "--format", "csv")
    rows = list(csv.reader(io.StringIO(result.out)))
    assert rows[1] == [HOSTILE]
    result = nkw_in_process(capsys, "sql", QUERY, "-w", ws.root, "--format", "json")
    assert json.loads(result.out)[0]["x\x1b[1m"] == HOSTILE


def test_sql_chunk_text_and_inspect_and_errors_are_safe(ws, capsys):
    for args in (
        ["sql", "SELECT text FROM chunks", "-w", ws.root],
        ["inspect", "-w", ws.root],
        ["sql", f"SELECT * FROM no_such_table_{CLEAR}", "-w", ws.root],
        ["view", "--doc", HOSTILE, "-w", ws.root, "--out", ws.root.parent / "out"],
        ["sql", f"SELECT '{CLEAR}'::INTEGER", "-w", ws.root],
    ):
        result = nkw_in_process(capsys, *args)
        result.no_traceback()
        assert not _raw_controls(result.out + result.err), (args, result.out, result.err)


def test_build_listing_names_a_hostile_file_name_safely(ws, tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / f"bad{TITLE}.txt").write_bytes(b"\xff\xfe\x00")  # refused input: its name is printed
    result = nkw_in_process(capsys, "build", folder, "-w", tmp_path / "ws", *INGEST_ONLY)
    result.no_traceback()
    assert not _raw_controls(result.out + result.err), result.out
