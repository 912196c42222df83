"""The whole build through the OpenAI-compatible test server: every LLM stage, faults on 20%
of requests, the response cache, and accounting in llm_calls."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from flows.build.corpus import build, make_resources
from flows.build.dry_run import dry_run
from flows.stages import STAGES, select_stages
from schemas.config import Settings, load_settings
from tasks.llm.client.cache import LLMCache
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.chunk_packs import pack_chunks
from tasks.tables.io import Workspace, read_frame
from tasks.text import count_tokens
from tests.conftest import SCREENPLAY
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

LLM_STAGES = [s.name for s in STAGES if s.uses_llm]


def _build(workspace: Workspace, server: FakeOpenAIServer, cache: bool) -> tuple[Settings, object]:
    llm_settings = fast_llm_settings(server.url, timeout_s=0.5, deadline_s=8.0, max_retries=3, concurrency=8)
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}}).model_copy(
        update={"llm": llm_settings}
    )
    with OpenAICompatibleClient(
        llm_settings, cache=LLMCache(workspace.cache_dir / "llm") if cache else None, sleep=lambda _s: None
    ) as client:
        report = build(
            [str(SCREENPLAY)], workspace, settings, resources=make_resources(settings, llm=client), quiet=True
        )
    return settings, report


def _outcome_by_item(calls: pd.DataFrame) -> dict[tuple[str, str], bool]:
    """(stage, item) -> whether any attempt succeeded; a request carrying several items
    ("<first item>+<more>", asked again as "<first item>#again", or split as "<first item>#split")
    counts as its first item; a salvaged attempt (cut, its complete items kept) succeeded."""
    first = calls["item_id"].str.replace(r"(#again|#split)*(\+\d+)?$", "", regex=True)
    return {
        key: bool(group["status"].isin(["ok", "cached", "salvaged"]).any())
        for key, group in calls.assign(item_id=first).groupby(["stage", "item_id"])
    }


@pytest.fixture(scope="module")
def clean_and_faulted(tmp_path_factory):
    root = tmp_path_factory.mktemp("llm-build")
    # Usage counted in the project's token unit, as the dry run counts.
    with FakeOpenAIServer(
        model_names=(TEST_MODEL,), responder=pipeline_responder, count_tokens=count_tokens
    ) as server:
        clean = Workspace.at(root / "clean")
        _, clean_report = _build(clean, server, cache=True)
        clean_requests = len(server.chat_requests())
        server.set_fault_rate(0.2)  # mixed kinds: malformed, schema-invalid, length, 429, 500, hang, refusal
        faulted = Workspace.at(root / "faulted")
        _, faulted_report = _build(faulted, server, cache=False)
    return clean, clean_report, clean_requests, faulted, faulted_report


def test_every_llm_stage_runs_through_the_server(clean_and_faulted):
    clean, report, requests, _, _ = clean_and_faulted
    assert report.ok and requests > 20  # every stage sends several items per request
    calls = read_frame(clean, "llm_calls")
    # extract_graph's combined requests (the default) also return the units and facts
    assert set(calls["stage"]) == set(LLM_STAGES) - {"extract_narrative", "extract_facts"}
    assert (
        (calls["status"] == "ok").all()
        and calls["prompt_tokens"].gt(0).all()
        and calls["model"].eq(TEST_MODEL).all()
    )
    for table in ("raw_entities", "events", "atomic_facts", "episodes", "episode_relations", "storylines"):
        assert len(read_frame(clean, table)) > 0, table


def test_no_item_is_lost_under_faults(clean_and_faulted):
    _, _, _, faulted, report = clean_and_faulted
    assert not any(o.status == "failed" for d in report.documents for o in d.outcomes)
    calls = read_frame(faulted, "llm_calls")
    failures = read_frame(faulted, "failures")
    failed_items = set(zip(failures["stage"], failures["item_id"]))
    statuses = set(calls["status"])
    assert statuses - {"ok"}, "the fault rate should have produced non-ok attempts"
    outcomes = _outcome_by_item(calls)
    lost = [key for key, ok in outcomes.items() if not ok and key not in failed_items]
    assert lost == [], lost
    # Items whose attempts all failed are failures rows (checked above); a refused group is split and
    # its halves asked again, so whether any item fails for good depends on where the faults fall.
    chunks = set(read_frame(faulted, "chunks")["chunk_id"])
    # extract_graph's combined requests pack consecutive chunks: one item per pack, and the packs
    # cover every chunk; extract_narrative reads their units and asks nothing.
    packs = _packs(faulted)
    assert {item for s, item in outcomes if s == "extract_graph"} == set(packs) and len(packs) < len(chunks)
    assert not {item for s, item in outcomes if s == "extract_narrative"}
    assert {member for members in packs.values() for member in members} == chunks


def _packs(workspace: Workspace) -> dict[str, list[str]]:
    """extract_graph item id -> the chunk ids its request packed."""
    chunks = read_frame(workspace, "chunks").sort_values("ordinal")
    text = read_frame(workspace, "documents").iloc[0]["text"]
    budget = load_settings().extract_graph.combined_pack_tokens
    return {
        p.item_id: [m.chunk_id for m in p.members]
        for p in pack_chunks(list(chunks.itertuples()), text, budget)
    }


def test_items_that_succeeded_match_the_fault_free_run(clean_and_faulted):
    clean, _, _, faulted, _ = clean_and_faulted
    succeeded = {
        item
        for (stage, item), ok in _outcome_by_item(read_frame(faulted, "llm_calls")).items()
        if ok and stage == "extract_graph"
    }
    assert succeeded

    def spans(workspace: Workspace) -> dict[str, set[tuple]]:
        mentions = read_frame(workspace, "raw_mentions")
        return {
            chunk: set(zip(g["surface"], g["char_start"], g["char_end"]))
            for chunk, g in mentions.groupby("chunk_id")
        }

    clean_spans, faulted_spans = spans(clean), spans(faulted)
    packs = _packs(faulted)
    for chunk_id in (member for item in succeeded for member in packs[item]):
        assert faulted_spans.get(chunk_id, set()) == clean_spans.get(chunk_id, set()), chunk_id


def test_rebuild_is_served_from_the_cache(clean_and_faulted, tmp_path):
    clean, _, _, _, _ = clean_and_faulted
    copy = Workspace.at(tmp_path / "copy")
    shutil.copytree(clean.root, copy.root)
    shutil.rmtree(copy.manifest_dir)  # forget what was built: every stage runs again
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        _, report = _build(copy, server, cache=True)
        assert report.ok and server.chat_requests() == []
    calls = read_frame(copy, "llm_calls")
    assert len(calls) == len(read_frame(clean, "llm_calls")) and (calls["status"] == "cached").all()
    for table in ("raw_mentions", "events", "episodes", "storylines"):
        assert read_frame(copy, table).equals(read_frame(clean, table)), table


GROUPED_STAGES = (
    "canonicalize_entities",
    "assemble_episodes",
    "relate_episodes",
    "break_cycles",
    "induce_storylines",
)
# One request per item, rendered from the build's own scene graph and candidates / chains / states.
DOWNSTREAM_STAGES = ("judge_continuity", "chain_continuity", "track_character_states")


def test_dry_run_over_the_build_is_within_20_percent_of_its_calls_and_tokens(clean_and_faulted):
    clean = clean_and_faulted[0]
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"url": "http://x/v1"})})
    estimate = {r["stage"]: r for r in dry_run([str(SCREENPLAY)], select_stages(), settings, clean)["stages"]}
    calls = read_frame(clean, "llm_calls")
    for stage in GROUPED_STAGES + DOWNSTREAM_STAGES:
        actual = calls[calls["stage"] == stage]
        row = estimate[stage]
        assert row["from"] == "previous build", stage
        if stage == "chain_continuity" and actual.empty:  # no preliminary chain in this build
            assert row["calls"] == 0
            continue
        assert len(actual), stage
        assert 0.8 <= row["calls"] / len(actual) <= 1.2, (stage, row["calls"], len(actual))
        tokens = int(actual["prompt_tokens"].sum())
        assert 0.8 <= row["prompt_tokens"] / tokens <= 1.2, (stage, row["prompt_tokens"], tokens)
