"""The README's promise for refused inputs, as the command line keeps it: every build of a folder
holding a file nkw does not read (its first and every later one, text or JSON) names the file with
its reason, ends with the INCOMPLETE line counting it, and exits 1; the rest of the folder builds."""

from __future__ import annotations

import json

from flows.cli.main import main
from tests.conftest import SCREENPLAY

FAST = ["--embeddings", "hashing", "--no-prefect", "-q", "--until", "split_chunks"]


def test_refused_inputs_are_counted_by_every_build_in_text_and_json(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "key.txt").write_text(SCREENPLAY.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "cover.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    workspace = str(tmp_path / "ws")

    for attempt in ("first build", "rebuild, every stage up to date"):
        assert main(["build", str(folder), "-w", workspace, *FAST]) == 1, attempt
        lines = capsys.readouterr().out.splitlines()
        assert any(line.startswith("not ingested: ") and "cover.png" in line for line in lines), attempt
        assert "INCOMPLETE: 1 input(s) not ingested (listed above with the reason)" in lines, attempt

    assert main(["build", str(folder), "-w", workspace, *FAST, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["item_id"].rsplit("/", 1)[-1] for f in report["ingest_failures"]] == ["cover.png"]
    assert all(f["error"] for f in report["ingest_failures"])
    assert [d["doc_id"] for d in report["documents"]] == ["key"]
