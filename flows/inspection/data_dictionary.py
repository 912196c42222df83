"""docs/tables.md, generated from the table specs: `python -m flows.inspection.data_dictionary`
prints it (`make docs` writes it), and a test fails when the file and the specs disagree."""

from __future__ import annotations

import sys
from typing import Any

from schemas.tables.dictionary import data_dictionary

HEADER = """# Tables

The data dictionary of a workspace, generated from `schemas/tables/` (do not edit by hand: run
`make docs`). Every table is Parquet under `<workspace>/tables/<table>/`; each column's
description is also stored in the Parquet schema's field metadata (`description`), and columns
marked *no* under "null" are declared non-nullable in the file. `nkw sql` counts only the
partitions listed by its `partitions` view (the files a build recorded); any other file in the
folder is not part of the workspace.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(entry: dict[str, Any]) -> str:
    """One table's section: grain, key, partitioning and a row per column."""
    lines = [
        f"## {entry['table']}",
        "",
        f"{entry['grain']}. Key: `{', '.join(entry['key']) or '—'}`. {entry['partitioning'].capitalize()}.",
        "",
        "| column | type | null | description |",
        "|---|---|---|---|",
    ]
    for column in entry["columns"]:
        notes = [column["description"]]
        if column["accepted_values"]:
            notes.append("one of " + ", ".join(f"`{v}`" for v in column["accepted_values"]))
        if column["references"]:
            notes.append(f"refers to `{column['references']}`")
        null = "yes" if column["nullable"] and not column["required"] else "no"
        described = _cell("; ".join(notes))
        lines.append(f"| `{column['name']}` | `{_cell(column['type'])}` | {null} | {described} |")
    return "\n".join(lines) + "\n"


def render_markdown(entries: list[dict[str, Any]]) -> str:
    """The whole docs/tables.md: a contents line, then one section per table in declaration order."""
    contents = " · ".join(f"[{e['table']}](#{e['table']})" for e in entries)
    return "\n".join([HEADER, contents, ""] + [render_table(e) for e in entries])


def main() -> int:
    sys.stdout.write(render_markdown(data_dictionary()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
