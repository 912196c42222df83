"""`--dry-run` over a workspace that holds a previous (offline) build: the grouped LLM stages are
estimated from that build's items with the stages' own packing and grouping."""

from __future__ import annotations

from flows.build.corpus import build, make_resources
from flows.build.dry_run import dry_run, format_dry_run
from flows.stages import select_stages
from schemas.config import load_settings
from tasks.llm.requests.chunk_packs import pack_chunks
from tasks.llm.requests.grouped import group_by_shared
from tasks.tables.io import Workspace, as_list, read_frame
from tests.conftest import SCREENPLAY


def test_previous_build_items_drive_the_grouped_estimates(tmp_path):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    workspace = Workspace.at(tmp_path / "ws")
    report = build([str(SCREENPLAY)], workspace, settings, resources=make_resources(settings), quiet=True)
    assert report.ok, report.summary()
    llm_settings = settings.model_copy(
        update={
            "llm": settings.llm.model_copy(update={"url": "http://x/v1"}),
            # the three separate extraction passes: narrative and facts make requests of their own
            "extract_graph": settings.extract_graph.model_copy(update={"combined": False}),
        }
    )
    estimate = dry_run([str(SCREENPLAY)], select_stages(), llm_settings, workspace, 1.0)
    rows = {row["stage"]: row for row in estimate["stages"]}
    combined = dry_run(
        [str(SCREENPLAY)],
        select_stages(),
        llm_settings.model_copy(update={"extract_graph": settings.extract_graph}),
        workspace,
        1.0,
    )
    assert [
        r["calls"] for r in combined["stages"] if r["stage"] in ("extract_narrative", "extract_facts")
    ] == [0, 0]
    for stage in ("extract_narrative", "extract_facts", "assemble_episodes", "relate_episodes"):
        assert rows[stage]["from"] == "previous build" and rows[stage]["calls"] > 0, stage
    chunks = read_frame(workspace, "chunks").sort_values("char_start")
    packs = pack_chunks(list(chunks.itertuples()), "", settings.extract_narrative.pack_tokens)
    assert rows["extract_narrative"]["calls"] == len(packs)
    entities = read_frame(workspace, "entities")
    profiled = entities[entities["degree"] >= settings.extract_facts.min_degree]
    tokens = dict(zip(chunks["chunk_id"], chunks["n_tokens"]))
    plan = [(r.entity_id, as_list(r.chunk_ids)) for r in profiled.itertuples() if len(as_list(r.chunk_ids))]
    groups = group_by_shared(plan, tokens, settings.extract_facts.pack_tokens, 1)
    assert rows["extract_facts"]["calls"] < len(groups)  # several entities per request
    assert rows["extract_facts"]["prompt_tokens"] > rows["extract_facts"]["calls"] * 300  # instructions
    assert "cost:" in format_dry_run(estimate)
