"""`nkw export` writes the summary hierarchy beside the graphs: a Markdown file that reads each
summary with every sentence's scene, and a CSV file with one row per quote."""

from __future__ import annotations

import csv
from pathlib import Path

from flows.cli.main import main
from tasks.tables.io import read_frame

DOC = "the_lighthouse_key"


def test_export_writes_the_summaries(sample_workspace, tmp_path: Path):
    args = ["export", "--workspace", str(sample_workspace.root), "--doc", DOC, "--format", "csv"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    quotes = read_frame(sample_workspace, "summary_quotes", DOC)
    summaries = read_frame(sample_workspace, "summaries", DOC)
    with open(tmp_path / f"{DOC}.summaries.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(quotes) and {r["summary_id"] for r in rows} == set(summaries["summary_id"])
    assert rows[0]["level"] == "work" and rows[0]["position"] == "1"
    assert {r["origin"] for r in rows if r["level"] != "storyline"} == {""}
    text = (tmp_path / f"{DOC}.summaries.md").read_text(encoding="utf-8")
    work = summaries[summaries["level"] == "work"].iloc[0]
    first = quotes[(quotes["summary_id"] == work["summary_id"]) & (quotes["position"] == 1)].iloc[0]
    sections = read_frame(sample_workspace, "sections", DOC).set_index("section_id")
    heading = sections.loc[first["section_id"], "heading"]
    assert f"- {first['text'].strip()} — [{sections.loc[first['section_id'], 'ordinal']}] {heading}" in text
    assert text.index("## The whole work") < text.index("## Storylines") < text.index("## Episodes")


def test_a_workspace_export_holds_every_document(sample_workspace, tmp_path: Path):
    args = ["export", "--workspace", str(sample_workspace.root), "--format", "graphml"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    name = sample_workspace.root.name
    with open(tmp_path / f"{name}.summaries.csv", encoding="utf-8") as handle:
        documents = {row["doc_id"] for row in csv.DictReader(handle)}
    assert documents == set(read_frame(sample_workspace, "documents")["doc_id"])
