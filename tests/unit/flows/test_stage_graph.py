import ast
import re
from pathlib import Path

import pytest

from flows.build.runner import stage_config_hash
from flows.stages import STAGES, blocked_by, select_stages
from schemas.config import load_settings
from schemas.tables import TABLES
from tasks.llm.requests.shapes import COMBINED_PROMPT_ID, SHAPES


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
    assert [s.name for s in select_stages(until="split_chunks")] == [
        "ingest_documents",
        "segment_sections",
        "split_chunks",
    ]
    assert [s.name for s in select_stages(["split_chunks", "ingest_documents"])] == [
        "ingest_documents",
        "split_chunks",
    ]
    with pytest.raises(ValueError, match="unknown stage"):
        select_stages(["nope"])


PROMPT_NAME = re.compile(r"^(PROMPT_ID|[A-Z_]+_PROMPT)$")
PROMPT_VALUE = re.compile(r"^[a-z_]+/v\d+$")


def _prompt_ids_in_code() -> dict[str, str]:
    """Prompt ids the build code sends (module-level PROMPT_ID / *_PROMPT constants) -> package."""
    tasks_dir = Path(__file__).resolve().parents[3] / "tasks"
    stage_package = {stage.name: stage.run.__module__.split(".")[1] for stage in STAGES}
    # grouped requests are declared in one place, each with the stage that sends it
    found = {shape.prompt_id: stage_package[shape.build_stage] for shape in SHAPES.values()}
    found[COMBINED_PROMPT_ID] = stage_package["extract_graph"]
    for path in tasks_dir.rglob("*.py"):
        package = path.relative_to(tasks_dir).parts[0]
        if package in ("query", "evaluate", "llm"):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                PROMPT_NAME.match(getattr(t, "id", "")) for t in node.targets
            ):
                if not isinstance(node.value, ast.Constant):
                    continue  # a name read from the request declaration, counted above
                value = node.value.value
                if isinstance(value, str) and PROMPT_VALUE.match(value):
                    found[value] = package
    return found


def test_stage_prompts_are_the_ones_the_code_sends():
    in_code = _prompt_ids_in_code()
    declared = {prompt for stage in STAGES for prompt in stage.prompts}
    assert declared == set(in_code)
    for stage in STAGES:
        package = stage.run.__module__.split(".")[1]
        assert all(in_code[p] == package for p in stage.prompts), stage.name
        assert stage.uses_llm == bool(stage.prompts), stage.name


def test_a_failed_stage_blocks_only_what_reads_its_output():
    stages = list(STAGES)
    blocked = blocked_by(stages, {"extract_facts"})
    # embed_assets and the continuity judges read atomic_facts; proposing candidates, the hierarchy
    # and character states never do.
    assert blocked == dict.fromkeys(["embed_assets", "judge_continuity", "chain_continuity"], "extract_facts")
    transitive = blocked_by(stages, {"extract_graph"})
    assert transitive["canonicalize_entities"] == "extract_graph"
    assert transitive["induce_storylines"] == "extract_graph"  # through entities and episodes
    assert "index_terms" not in transitive and "embed_texts" not in transitive


def test_side_tables_are_declared_by_the_graph():
    for stage in STAGES:
        assert stage.side_writes[0] == "failures"
        assert ("llm_calls" in stage.side_writes) == stage.uses_llm
    assert [s.name for s in STAGES if s.reads_input] == ["ingest_documents"]


def test_settings_read_from_another_section_change_the_fingerprint():
    settings = load_settings()
    flipped = load_settings(overrides={"extract_graph": {"combined": not settings.extract_graph.combined}})
    for stage in STAGES:
        for name in stage.reads_settings:
            section, field_name = name.split(".")
            assert hasattr(getattr(settings, section), field_name), f"{stage.name}: no setting {name}"
    by_name = {stage.name: stage for stage in STAGES}
    for name in ("extract_narrative", "extract_facts"):
        # Switching the combined extraction changes where their rows come from: they must rebuild.
        assert stage_config_hash(by_name[name], settings) != stage_config_hash(by_name[name], flipped)
    assert stage_config_hash(by_name["index_terms"], settings) == stage_config_hash(
        by_name["index_terms"], flipped
    )
