import ast
from pathlib import Path

import pytest

from flows.stages import STAGES, blocked_by, select_stages
from schemas.tables import TABLES


def test_every_table_read_is_written_by_an_earlier_stage():
    written: set[str] = set()
    for stage in STAGES:
        for table in stage.reads:
            assert table in written, f"{stage.name} reads {table} before any stage writes it"
        written.update(stage.writes)


def test_each_table_has_one_writer_and_is_declared():
    writers: dict[str, str] = {}
    for stage in STAGES:
        for table in stage.writes:
            assert table in TABLES, table
            assert table not in writers, f"{table} written by {writers.get(table)} and {stage.name}"
            writers[table] = stage.name


def test_stage_names_are_unique_and_module_named():
    names = [s.name for s in STAGES]
    assert len(names) == len(set(names))
    for stage in STAGES:
        assert stage.run.__module__.endswith(f".{stage.name}"), stage.name
        assert stage.run.__module__.startswith("tasks."), stage.name


def test_select_stages():
    assert [s.name for s in select_stages(until="split_chunks")] == ["ingest_documents", "segment_sections", "split_chunks"]
    assert [s.name for s in select_stages(["split_chunks", "ingest_documents"])] == ["ingest_documents", "split_chunks"]
    with pytest.raises(ValueError, match="unknown stage"):
        select_stages(["nope"])


def _prompt_ids_in_code() -> dict[str, str]:
    """Every module-level PROMPT_ID under tasks/ (build stages and query time) -> its module."""
    found = {}
    for path in (Path(__file__).resolve().parents[3] / "tasks").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PROMPT_ID" for t in node.targets):
                found[ast.literal_eval(node.value)] = str(path)
    return found


def test_stage_prompts_are_the_ones_the_code_sends():
    in_code = _prompt_ids_in_code()
    declared = {prompt for stage in STAGES for prompt in stage.prompts}
    stage_names = {stage.name for stage in STAGES}
    sent_by_stages = {prompt for prompt in in_code if prompt.split("/")[0] in stage_names}
    assert declared == sent_by_stages
    for stage in STAGES:
        assert all(p.split("/")[0] == stage.name for p in stage.prompts), stage.name
        assert stage.uses_llm == bool(stage.prompts), stage.name


def test_a_failed_stage_blocks_only_what_reads_its_output():
    stages = list(STAGES)
    blocked = blocked_by(stages, {"extract_facts"})
    # embed_assets reads atomic_facts; the hierarchy stages never read what extract_facts writes.
    assert blocked == {"embed_assets": "extract_facts"}
    transitive = blocked_by(stages, {"extract_graph"})
    assert transitive["canonicalize_entities"] == "extract_graph"
    assert transitive["induce_storylines"] == "extract_graph"  # through entities and episodes
    assert "index_terms" not in transitive and "embed_texts" not in transitive


def test_side_tables_are_declared_by_the_graph():
    for stage in STAGES:
        assert stage.side_writes[0] == "failures"
        assert ("llm_calls" in stage.side_writes) == stage.uses_llm
    assert [s.name for s in STAGES if s.reads_input] == ["ingest_documents"]
