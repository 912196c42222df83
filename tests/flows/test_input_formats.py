"""A screenplay delivered as PDF, Fountain and Final Draft builds the same scenes as its text version;
a scanned PDF and a random binary in the same folder are each refused in one line, the rest of the
folder builds, and the INCOMPLETE line counts them."""

from __future__ import annotations

import random

from flows.cli.main import main
from tasks.ingest.segment_sections import segment
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY
from tests.fixtures.screenplay_formats import scanned_pdf, to_fdx, to_fountain, to_pdf

FAST = ["--embeddings", "hashing", "--no-prefect", "-q", "--until", "split_chunks"]


def test_each_format_builds_the_text_versions_scenes_and_the_unreadable_are_counted(tmp_path, capsys):
    text = SCREENPLAY.read_text(encoding="utf-8")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "key.txt").write_text(text, encoding="utf-8")
    (folder / "key_fountain.fountain").write_text(to_fountain(text, "en"), encoding="utf-8")
    (folder / "key_fdx.fdx").write_text(to_fdx(text, "en"), encoding="utf-8")
    to_pdf(text, "en", folder / "key_pdf.pdf")
    scanned_pdf(folder / "scan.pdf")
    (folder / "noise.bin").write_bytes(random.Random(7).randbytes(4096))
    (folder / "noise").write_bytes(random.Random(8).randbytes(4096))  # no suffix: read as text, refused

    code = main(["build", str(folder), "-w", str(tmp_path / "ws"), *FAST])
    out = capsys.readouterr().out

    refused = [line for line in out.splitlines() if line.startswith("not ingested:")]
    assert code == 1 and "INCOMPLETE: 3 input(s) not ingested" in out, out
    assert len(refused) == 3, out
    assert any("scan.pdf" in line and "scanned PDF" in line and "OCR" in line for line in refused), out
    assert any("noise.bin" in line and "not a kind of document" in line for line in refused), out
    assert any(line.endswith("noise: binary file (contains NUL bytes), not text") for line in refused), out

    sections = read_frame(Workspace.at(tmp_path / "ws"), "sections")
    expected = [r["heading"] for r in segment("d", text, "en", "screenplay")[0]]
    for doc_id in ("key", "key_fountain", "key_fdx", "key_pdf"):
        rows = sections[sections["doc_id"] == doc_id].sort_values("ordinal")
        assert list(rows["heading"]) == expected, doc_id
    documents = read_frame(Workspace.at(tmp_path / "ws"), "documents").set_index("doc_id")
    assert set(documents.loc[["key_fountain", "key_fdx", "key_pdf"], "kind"]) == {"screenplay"}
