"""A --workspace that is a file, or lies under one, is a usage mistake: one line naming it and
exit 2 (as the README says), for every command, before anything is read or written."""

from __future__ import annotations

import pytest

from flows.cli.main import main
from tests.conftest import SCREENPLAY

COMMANDS = [
    ["build", str(SCREENPLAY), "--embeddings", "hashing", "--no-prefect", "-q"],
    ["build", str(SCREENPLAY), "--dry-run"],
    ["build", "--retry-failed"],
    ["remove", "a"],
    ["ask", "Who?", "--embeddings", "hashing"],
    ["sql", "SELECT 1"],
    ["inspect"],
    ["view", "--doc", "a", "--out", "OUT"],
    ["report", "--out", "OUT"],
    ["serve", "--embeddings", "hashing"],
]


@pytest.mark.parametrize("under", [False, True], ids=["a file", "under a file"])
@pytest.mark.parametrize(
    "args", COMMANDS, ids=lambda a: "-".join(a[:1] + [x for x in a if x.startswith("--d")])
)
def test_a_workspace_path_that_is_a_file_exits_2(capsys, tmp_path, args, under):
    blocker = tmp_path / "ws"
    blocker.write_text("not a workspace")
    workspace = blocker / "inner" if under else blocker
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    assert main([*argv, "-w", str(workspace)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: workspace {workspace} is not a folder" + (
        f" ({blocker} is not a folder)" if under else ""
    )
    assert blocker.read_text() == "not a workspace" and not (tmp_path / "out").exists()
