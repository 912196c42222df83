"""The episode layer against STAGE's released episodes (the paper authors' own, LLM-made): per
document, which scenes each episode spans (scene Jaccard of the best-matching episode, both ways),
where episodes break (boundary F1 over adjacent scenes), which reference relations join two of our
related episodes, and how names and descriptions match (ROUGE-L); overall and per language.

    python benchmarks/bench_episode_agreement.py --workspace W [--corpus DIR] [--json]

The workspace must hold a build of the corpus (`nkw build .../stage-corpus/documents.jsonl`). The
reference is read here, for measuring only; no stage of the product reads it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tasks.evaluate.episode_agreement import EpisodeSpan, document_agreement  # noqa: E402
from tasks.evaluate.gold_mapping import SectionLookup  # noqa: E402
from tasks.tables.io import Workspace, as_list, read_frame  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "stage-corpus"
KEPT = "kept"


def read_gzip_lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def reference_spans(rows: list[dict], lookup: SectionLookup) -> list[EpisodeSpan]:
    spans = []
    for row in rows:
        sections: list[str] = []
        for title in row.get("scenes") or []:
            found, _ = lookup.title(title)
            sections.extend(found)
        spans.append(
            EpisodeSpan(
                row["episode_id"], frozenset(sections), row.get("name", ""), row.get("description", "")
            )
        )
    return spans


def our_spans(episodes: pd.DataFrame) -> list[EpisodeSpan]:
    return [
        EpisodeSpan(r["episode_id"], frozenset(as_list(r["section_ids"])), str(r["title"]), str(r["summary"]))
        for r in episodes.to_dict("records")
    ]


def measure(workspace: Workspace, corpus: Path) -> pd.DataFrame:
    """One row of agreement figures per document built in the workspace."""
    episodes_by_doc: dict[str, list[dict]] = defaultdict(list)
    for row in read_gzip_lines(corpus / "reference_episodes.jsonl.gz"):
        episodes_by_doc[row["doc_id"]].append(row)
    relations_by_doc: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in read_gzip_lines(corpus / "reference_episode_relations.jsonl.gz"):
        relations_by_doc[row["doc_id"]].append((row["subject_id"], row["object_id"]))
    languages = {}
    with (corpus / "documents.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            document = json.loads(line)
            languages[document["doc_id"]] = document["language"]
    rows = []
    for doc_id in sorted(episodes_by_doc):
        sections = read_frame(workspace, "sections", part=doc_id)
        if sections.empty:
            continue
        episodes = read_frame(workspace, "episodes", part=doc_id)
        relations = read_frame(workspace, "episode_relations", part=doc_id)
        kept = relations[relations["status"] == KEPT]
        order = [
            r["section_id"]
            for r in sections.sort_values("ordinal").to_dict("records")
            if r["section_kind"] != "preamble"
        ]
        figures = document_agreement(
            reference_spans(episodes_by_doc[doc_id], SectionLookup(sections)),
            our_spans(episodes),
            order,
            relations_by_doc[doc_id],
            list(zip(kept["source_episode_id"], kept["target_episode_id"])),
        )
        rows.append({"doc_id": doc_id, "language": languages.get(doc_id, ""), **figures})
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Means per language and overall (documents weighted equally)."""
    figures = [c for c in frame.columns if c not in ("doc_id", "language")]
    groups = [("all", frame)] + list(frame.groupby("language"))
    return pd.DataFrame(
        [
            {"group": name, "documents": len(group), **group[figures].mean().round(3).to_dict()}
            for name, group in groups
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--corpus", default=str(SHARED), help="folder holding the reference files")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    frame = measure(Workspace.at(args.workspace), Path(args.corpus))
    if frame.empty:
        sys.exit("error: no document of the reference is built in this workspace")
    table = summary(frame)
    if args.json:
        print(table.to_json(orient="records"))
        return
    print(table.T.to_string(header=False))


if __name__ == "__main__":
    main()
