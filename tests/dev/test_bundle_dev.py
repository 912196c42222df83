"""Acceptance checks of the asset bundle on the shared development sets (offline build):
characters from cues, grounded spans, facts for named characters, the cleaned episode DAG
and storylines that follow it."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import networkx as nx
import pandas as pd

from tasks.graph.zh import COLLECTIVE_ZH
from tasks.ingest.screenplay import parse_blocks
from tasks.tables.io import Workspace, as_list, read_frame
from tests.dev.conftest import nkw

STAGE_DOCS = (
    "en049957b3c0b54085baddbec23e00506c",
    "en12839bdf037c46a0a3d9de0e50a6cbaa",
    "ch48a3d3de9f887c24c526ff5db17160702612afcb",
)


def _frames(workspace, doc_id: str, *tables: str) -> list[pd.DataFrame]:
    ws = Workspace.at(workspace)
    return [read_frame(ws, table, doc_id) for table in tables]


def test_every_frequent_speaker_is_one_character_with_mentions_where_it_speaks(dev_workspace):
    workspace, _ = dev_workspace
    for doc_id in STAGE_DOCS:
        documents, sections, entities, mentions = _frames(
            workspace, doc_id, "documents", "sections", "entities", "mentions"
        )
        text, language = documents.iloc[0]["text"], documents.iloc[0]["language"]
        cues: dict[str, set[str]] = defaultdict(set)
        counts: Counter[str] = Counter()
        for section in sections.itertuples():
            for block in parse_blocks(text, section.char_start, section.char_end, language):
                if block.kind == "cue":
                    counts[block.speaker.upper()] += 1
                    cues[block.speaker.upper()].add(section.section_id)
        # Collective cues (众人 "everyone", CROWD) are speakers too; they are one group entity.
        speakers = entities[entities["entity_type"].isin(["character", "group"])]
        names = {
            row.entity_id: {str(n).upper() for n in [row.name, *as_list(row.aliases)]}
            for row in speakers.itertuples()
        }
        for speaker, n in counts.items():
            if n < 3:
                continue
            owners = [entity_id for entity_id, variants in names.items() if speaker in variants]
            assert len(owners) == 1, (doc_id, speaker, n, owners)
            kind = entities.loc[entities["entity_id"] == owners[0], "entity_type"].iloc[0]
            assert kind == "character" or speaker in COLLECTIVE_ZH, (doc_id, speaker, kind)
            mentioned = set(mentions.loc[mentions["entity_id"] == owners[0], "section_id"])
            assert cues[speaker] <= mentioned, (doc_id, speaker, sorted(cues[speaker] - mentioned)[:3])


def test_units_facts_and_profiles_are_grounded(dev_workspace):
    workspace, _ = dev_workspace
    for doc_id in STAGE_DOCS:
        chunks, mentions = _frames(workspace, doc_id, "chunks", "mentions")
        by_chunk = chunks.set_index("chunk_id")
        for table in ("relations", "events", "interactions", "occasions", "atomic_facts", "entity_profiles"):
            assert len(_frames(workspace, doc_id, table)[0]) > 0, (doc_id, table)
        for table in ("mentions", "events", "atomic_facts"):
            for row in _frames(workspace, doc_id, table)[0].itertuples():
                chunk = by_chunk.loc[row.chunk_id]
                assert chunk.char_start <= row.char_start <= row.char_end <= chunk.char_end, (
                    doc_id,
                    table,
                    row,
                )
        text = _frames(workspace, doc_id, "documents")[0].iloc[0]["text"]
        for row in mentions.itertuples():
            assert row.surface.lower() in text[row.char_start : row.char_end].lower(), (doc_id, row.surface)


def test_fairytale_named_characters_have_facts(dev_workspace, shared_data):
    workspace, _ = dev_workspace
    for line in (shared_data / "fairytaleqa" / "documents.jsonl").read_text(encoding="utf-8").splitlines():
        doc_id = json.loads(line)["doc_id"]
        entities, facts = _frames(workspace, doc_id, "entities", "atomic_facts")
        characters = entities[(entities["entity_type"] == "character") & (entities["degree"] >= 2)]
        assert len(characters) > 0, doc_id
        assert set(characters["entity_id"]) <= set(facts["entity_id"]), doc_id


def test_cleaned_episode_graph_is_a_dag_and_storylines_follow_it(dev_workspace):
    workspace, _ = dev_workspace
    for doc_id in STAGE_DOCS:
        episodes, relations, storylines = _frames(
            workspace, doc_id, "episodes", "episode_relations", "storylines"
        )
        assert len(episodes) and len(relations) and len(storylines), doc_id
        kept = relations[relations["status"] == "kept"]
        dag = nx.DiGraph(list(zip(kept["source_episode_id"], kept["target_episode_id"])))
        assert nx.is_directed_acyclic_graph(dag), doc_id
        known = set(episodes["episode_id"])
        for storyline in storylines.itertuples():
            chain = as_list(storyline.episode_ids)
            assert set(chain) <= known and len(chain) >= 2
            assert all(dag.has_edge(a, b) for a, b in zip(chain, chain[1:])), (doc_id, storyline.name)


def test_inspect_prints_the_asset_and_hierarchy_statistics(dev_workspace):
    workspace, _ = dev_workspace
    process, _ = nkw("inspect", "--workspace", str(workspace), "--json")
    data = json.loads(process.stdout)
    for doc_id in STAGE_DOCS:
        assert data["assets"][doc_id]["kg_nodes"] > 0 and data["assets"][doc_id]["facts"] > 0
        assert (
            data["hierarchy"][doc_id]["storylines"] > 0 and data["hierarchy"][doc_id]["remaining_sccs"] == 0
        )
    text, _ = nkw("inspect", "--workspace", str(workspace))
    assert "assets per document" in text.stdout and "narrative hierarchy per document" in text.stdout
