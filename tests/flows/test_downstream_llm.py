"""The downstream stages through the OpenAI-compatible test server: continuity judgments, the
chain critic and the character-state loop, fault-free and with faults on a third of the
requests. Nothing is lost: every candidate, preliminary chain and planned scene ends as rows
or as a `failures` row."""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict

import pandas as pd
import pytest

from flows.build.corpus import build, make_resources
from flows.stages import STAGES_BY_NAME
from schemas.config import load_settings
from tasks.character_states.offline import candidates as state_candidates
from tasks.continuity.chains import continuity_graph, preliminary_groups
from tasks.continuity.scenes import scene_graph
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

DOC = "the_lighthouse_key"
STAGES = [
    STAGES_BY_NAME[name]
    for name in ("propose_continuity", "judge_continuity", "chain_continuity", "track_character_states")
]
TABLES = (
    "sections",
    "entities",
    "mentions",
    "occasions",
    "events",
    "interactions",
    "atomic_facts",
    "documents",
    "continuity_candidates",
    "continuity_judgments",
    "continuity_chains",
    "character_states",
    "failures",
    "llm_calls",
)


def _run(
    source: Workspace, target: Workspace, server: FakeOpenAIServer, per_request: int | None = None
) -> tuple[dict[str, pd.DataFrame], object]:
    """The downstream stages over a copy of `source`; `per_request` bounds the items of a grouped
    request (smaller groups: more requests for the faults to hit)."""
    shutil.copytree(source.root, target.root)
    llm = fast_llm_settings(server.url, timeout_s=0.5, deadline_s=5.0, max_retries=1, concurrency=8)
    overrides: dict = {"embed_texts": {"backend": "hashing"}}
    if per_request is not None:
        overrides["continuity"] = {"max_candidates_per_request": per_request}
        overrides["character_states"] = {"max_scenes_per_request": per_request}
    settings = load_settings(overrides=overrides).model_copy(update={"llm": llm})
    with OpenAICompatibleClient(llm, cache=None, sleep=lambda _s: None) as client:
        report = build(
            [str(SCREENPLAY)],
            target,
            settings,
            stages=STAGES,
            resources=make_resources(settings, llm=client),
            quiet=True,
        )
    return {name: read_frame(target, name, DOC) for name in TABLES}, report


@pytest.fixture(scope="module")
def runs(sample_workspace, tmp_path_factory):
    root = tmp_path_factory.mktemp("downstream-llm")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        clean = _run(sample_workspace, Workspace.at(root / "clean"), server)
        server.set_fault_rate(0.3)
        faulted = _run(sample_workspace, Workspace.at(root / "faulted"), server, per_request=2)
    return clean, faulted


def _failed(tables: dict[str, pd.DataFrame], stage: str) -> set[str]:
    failures = tables["failures"]
    return set(failures.loc[failures["stage"] == stage, "item_id"])


def test_the_llm_path_fills_every_downstream_table(runs):
    (tables, report), _ = runs
    assert report.ok, report.summary()
    calls = tables["llm_calls"]
    assert set(calls["stage"]) == {"judge_continuity", "chain_continuity", "track_character_states"}
    assert (calls["status"] == "ok").all() and tables["failures"].empty
    judgments = tables["continuity_judgments"]
    assert len(judgments) == len(tables["continuity_candidates"]) and (judgments["method"] == "llm").all()
    assert judgments["is_continuity"].any() and not judgments["is_continuity"].all()
    # Several candidates per request (prompt v2), each answered by its own number.
    asked = calls[calls["stage"] == "judge_continuity"]
    assert 1 <= len(asked) < len(judgments) and set(asked["prompt_id"]) == {"judge_continuity/v2"}
    chains = tables["continuity_chains"]
    finals = chains[chains["kind"] == "final"]
    assert len(finals) > 0 and (chains["method"] == "llm").all()
    for chain in finals.itertuples():
        assert len(chain.shared_entity_ids) > 0 and len(chain.cues) == len(
            chain.shared_entity_ids
        )
    states = tables["character_states"]
    assert len(states) > 0 and (states["method"] == "llm").all() and set(states["round"]) == {1, 2}
    # Several scenes per extract and per critic request (prompts v2).
    rounds = calls[calls["stage"] == "track_character_states"]
    assert set(rounds["prompt_id"]) == {"extract_states/v3", "critique_states/v3"}
    assert len(rounds) < 2 * states["section_id"].nunique()


def test_nothing_is_lost_under_faults(runs):
    _, (tables, report) = runs
    assert not any(o.status == "failed" for d in report.documents for o in d.outcomes)
    statuses = Counter(tables["llm_calls"]["status"])
    assert set(statuses) - {"ok"}, statuses
    # Every candidate pair: a judgment or a failures row, never both.
    judged = set(tables["continuity_judgments"]["candidate_id"])
    failed = _failed(tables, "judge_continuity")
    assert judged | failed == set(tables["continuity_candidates"]["candidate_id"]) and not judged & failed
    calls = tables["llm_calls"]
    faulted = calls[(calls["stage"] == "judge_continuity") & ~calls["status"].isin(["ok", "cached"])]
    # The faults met the judgments; retries and split groups may win every one of them back.
    assert len(faulted) > 0, "a third of the requests failing should meet judge_continuity"
    # Every preliminary chain of the continuity graph: a critiqued row or a failures row.
    scenes = scene_graph(DOC, tables)
    graph = continuity_graph(tables["continuity_judgments"].to_dict("records"), 0.5)
    chains = tables["continuity_chains"]
    expected = {tuple(g) for g in preliminary_groups(graph, scenes, "components")}
    rows = {tuple(s) for s in chains.loc[chains["kind"] == "preliminary", "section_ids"]}
    by_id = {tuple(s): c for s, c in zip(chains["section_ids"].map(tuple), chains["chain_id"])}
    failed_chains = _failed(tables, "chain_continuity")
    assert rows <= expected and len(rows) + len(failed_chains) == len(expected)
    assert not {by_id[r] for r in rows} & failed_chains
    # Every scene with candidate characters: states or a failures row of one of its requests.
    mentions: dict[str, Counter] = defaultdict(Counter)
    for section_id, entity_id in zip(tables["mentions"]["section_id"], tables["mentions"]["entity_id"]):
        mentions[section_id][entity_id] += 1
    planned = {s.section_id for s in scenes.scenes if state_candidates(scenes, s, mentions, 8)}
    with_rows = set(tables["character_states"]["section_id"])
    failed_scenes = {item.split("#", 1)[0] for item in _failed(tables, "track_character_states")}
    assert planned <= with_rows | failed_scenes and failed_scenes
