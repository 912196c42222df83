"""Attack family "output folders": links planted where `view`, `export` and `report` write (the
file itself, or the --out folder). The write is refused in one line (exit 2) and the link's
target is never changed; a plain folder still gets its files, by temp file and rename."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.files import UnsafeOutput, write_output
from tasks.tables.io import Workspace
from tests.faults.attack_kit import INGEST_ONLY, GOOD_TEXT, nkw_in_process

TARGETS = {  # command arguments, and the file it writes into the --out folder
    "view": (["view", "--doc", "a"], "a.html"),
    "export graphml": (["export", "--doc", "a", "--format", "graphml"], "a.entities.graphml"),
    "export csv": (["export", "--doc", "a", "--format", "csv"], "a.interactions.edges.csv"),
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("outputs")
    (root / "a.txt").write_text(GOOD_TEXT)
    workspace = Workspace.at(root / "ws")
    assert main(["build", str(root / "a.txt"), "-w", str(workspace.root), *INGEST_ONLY]) == 0
    return workspace


@pytest.fixture()
def victim(tmp_path) -> Path:
    path = tmp_path / "elsewhere" / "precious.txt"
    path.parent.mkdir()
    path.write_text("keep me\n")
    return path


@pytest.mark.parametrize("target", list(TARGETS))
def test_a_link_planted_at_the_output_file_is_refused_and_its_target_kept(target, ws, victim, tmp_path,
                                                                          capsys):
    args, name = TARGETS[target]
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(victim)
    result = nkw_in_process(capsys, *args, "-w", ws.root, "--out", out)
    result.clean_failure()
    assert result.code == 2 and "symbolic link" in result.err and name in result.err
    assert victim.read_text() == "keep me\n" and (out / name).is_symlink()


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_output_folder_that_is_a_link_is_refused(target, ws, victim, tmp_path, capsys):
    args, _name = TARGETS[target]
    (tmp_path / "out").symlink_to(victim.parent)
    result = nkw_in_process(capsys, *args, "-w", ws.root, "--out", tmp_path / "out")
    result.clean_failure()
    assert result.code == 2 and "output folder" in result.err
    assert sorted(p.name for p in victim.parent.iterdir()) == ["precious.txt"]


@pytest.mark.parametrize("target", list(TARGETS))
def test_a_plain_folder_gets_its_files_and_no_temp_file_is_left(target, ws, tmp_path, capsys):
    args, name = TARGETS[target]
    result = nkw_in_process(capsys, *args, "-w", ws.root, "--out", tmp_path / "out")
    assert result.code == 0, result.err
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert name in written and not [n for n in written if n.endswith(".tmp")]


def test_a_report_never_writes_through_a_planted_link(ws, victim, tmp_path, monkeypatch):
    from flows.inspection import report

    monkeypatch.setattr(report, "load_report_data", lambda *a: None)
    monkeypatch.setattr(report, "render_html", lambda data: "<html></html>")
    (tmp_path / "report.html").symlink_to(victim)
    with pytest.raises(UnsafeOutput, match="symbolic link"):
        report.write_report(ws, tmp_path / "report.html")
    assert victim.read_text() == "keep me\n"


def test_an_output_name_that_is_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "a.html")
    (tmp_path / "b.html").mkdir()
    for name in ("a.html", "b.html"):
        with pytest.raises(UnsafeOutput, match="not a regular file"):
            write_output(tmp_path / name, "x")
