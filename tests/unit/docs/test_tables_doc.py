"""docs/tables.md is what the table specs say today."""

from __future__ import annotations

from pathlib import Path

from flows.inspection.data_dictionary import render_markdown
from schemas.tables.dictionary import data_dictionary
from schemas.tables.spec import TABLES

REPO = Path(__file__).resolve().parents[3]


def test_the_data_dictionary_is_current():
    written = (REPO / "docs" / "tables.md").read_text(encoding="utf-8")
    assert written == render_markdown(data_dictionary()), "docs/tables.md is stale: run `make docs`"


def test_every_table_and_column_is_in_the_dictionary():
    written = (REPO / "docs" / "tables.md").read_text(encoding="utf-8")
    for name, table in TABLES.items():
        section = written.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        for column in table.columns:
            assert f"| `{column}` |" in section, (name, column)
