"""`nkw export` of the summary hierarchy: one document's (or every document's) summaries as a readable
Markdown file — the work summary, the storylines in their order, the community reports and the
episodes, each sentence followed by its scene — and as a CSV file with one row per quote for
spreadsheets and DuckDB."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from tasks.files import write_output

LEVEL_TITLES = (
    ("work", "The whole work"),
    ("storyline", "Storylines"),
    ("community", "Communities"),
    ("episode", "Episodes"),
)
CSV_COLUMNS = (
    "doc_id", "level", "ordinal", "origin", "title", "summary_id", "subject_id", "position", "rank",
    "section_ordinal", "heading", "sentence_id", "char_start", "char_end", "text",
)  # fmt: skip


def quote_rows(summaries: pd.DataFrame, quotes: pd.DataFrame, sections: pd.DataFrame) -> pd.DataFrame:
    """One row per quote with its summary and scene, by document, level, summary order and position."""
    if quotes.empty:
        return pd.DataFrame(columns=list(CSV_COLUMNS))
    scenes = sections[["section_id", "ordinal", "heading"]].rename(columns={"ordinal": "section_ordinal"})
    merged = quotes.merge(
        summaries[["summary_id", "level", "ordinal", "origin", "title", "subject_id"]], on="summary_id"
    ).merge(scenes, on="section_id", how="left")
    order = {level: rank for rank, (level, _) in enumerate(LEVEL_TITLES)}
    merged["level_order"] = merged["level"].map(order)
    merged = merged.sort_values(["doc_id", "level_order", "ordinal", "position"])
    return merged[list(CSV_COLUMNS)].reset_index(drop=True)


def markdown(titles: dict[str, str], rows: pd.DataFrame) -> str:
    """The summaries of every document as Markdown, each quote followed by its scene."""
    lines: list[str] = []
    for doc_id, document in rows.groupby("doc_id", sort=True):
        lines += [
            f"# {titles.get(doc_id, doc_id)}",
            "",
            f"Document `{doc_id}`; every sentence is a quote.",
            "",
        ]
        for level, heading in LEVEL_TITLES:
            part = document[document["level"] == level]
            if part.empty:
                continue
            lines += [f"## {heading}", ""]
            for (_, title, origin), summary in part.groupby(
                ["ordinal", "title", "origin"], sort=False, dropna=False
            ):
                label = f" ({origin})" if isinstance(origin, str) else ""
                if level != "work":
                    lines += [f"### {title}{label}", ""]
                for quote in summary.itertuples():
                    scene = (
                        f"[{int(quote.section_ordinal)}] {quote.heading}"
                        if pd.notna(quote.section_ordinal)
                        else ""
                    )
                    lines.append(f"- {quote.text.strip()} — {scene}")
                lines.append("")
    return "\n".join(lines)


def write_summaries(
    titles: dict[str, str], summaries: pd.DataFrame, quotes: pd.DataFrame, sections: pd.DataFrame, stem: Path
) -> list[Path]:
    """Write `<stem>.summaries.md` and `<stem>.summaries.csv`; returns the files written."""
    rows = quote_rows(summaries, quotes, sections)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    # An empty cell, not "nan", where a summary has no origin (every level but the storylines)
    writer.writerows(rows.astype(object).where(rows.notna(), "").itertuples(index=False, name=None))
    text_path, csv_path = Path(f"{stem}.summaries.md"), Path(f"{stem}.summaries.csv")
    write_output(text_path, markdown(titles, rows))
    write_output(csv_path, buffer.getvalue())
    return [text_path, csv_path]
