"""Revisions cost what changed: a 24-scene screenplay built through the OpenAI-compatible test
server with the workspace's LLM cache, one sentence added to one scene, rebuilt. Requests are
small (a few items each) so every LLM stage makes several; the rebuild must re-ask only the
requests that show the edited scene or what its edit really changed, and its tables must equal a
clean build of the edited text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.build.corpus import build, make_resources
from schemas.config import load_settings
from tasks.llm.client.factory import build_llm_client
from tasks.tables.io import Workspace
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder
from tests.fixtures.revisions import StageCost, add_sentence, asked, table_differences, total

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "screenplays" / "en_harbour_ledger.txt"
DOC = SOURCE.stem
SCENE = 5  # early, so most scenes come after the edit: their character offsets all move
SENTENCE = "Mara turns the brass lantern down and closes the Ledger."
# A few items per request, so that each stage spreads over several requests; one scene per
# extraction request, so the edit changes what the model reads of that scene alone (how packs of
# several scenes keep their boundaries is tests/unit/test_request_groups.py's).
SMALL_REQUESTS = {
    "embed_texts": {"backend": "hashing"},
    "extract_graph": {"combined_pack_tokens": 0},
    "assemble_episodes": {"pack_tokens": 600, "max_per_request": 4},
    "relate_episodes": {"pack_tokens": 600, "max_pairs_per_request": 6},
    "break_cycles": {"pack_tokens": 600, "max_per_request": 6},
    "induce_storylines": {"pack_tokens": 600, "max_per_request": 3},
    "continuity": {"pack_tokens": 1200, "max_candidates_per_request": 6},
    "character_states": {"pack_tokens": 700, "max_scenes_per_request": 4},
}
# Requests that show the edited scene: its extraction, the continuity judgments that show its
# packet, its character-state rounds (extract and critic, two rounds at most).
SHOW_THE_SCENE = {
    "CombinedExtraction": SENTENCE,
    "ContinuityJudgmentBatch": f"[scene {SCENE}]",
    "StatesReplyBatch": SENTENCE,
    "StatesCritiqueBatch": SENTENCE,
}
# What a stage may re-ask beyond them: a group whose content-defined boundary follows the
# scene's, and the episodes and storylines the scene's units belong to.
MAX_OTHERS = 2
# Storylines over one-scene episodes: the edited scene's changed relations can regroup the storylines
# around it, and each storyline whose episodes changed is described again (three packs here).
MAX_OTHERS_OF = {"StorylineDescriptionBatch": 3}


def _build(path: Path, workspace: Workspace, url: str) -> None:
    settings = load_settings(overrides=SMALL_REQUESTS).model_copy(
        update={"llm": fast_llm_settings(url, concurrency=4)}
    )
    with build_llm_client(settings.llm, None, workspace.cache_dir / "llm") as client:
        report = build(
            [str(path)], workspace, settings, resources=make_resources(settings, llm=client), quiet=True
        )
    assert report.ok, report.summary()


@pytest.fixture(scope="module")
def revision(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("revisions")
    source = root / "input" / SOURCE.name
    source.parent.mkdir()
    text = SOURCE.read_text(encoding="utf-8")
    workspace, clean = Workspace.at(root / "ws"), Workspace.at(root / "clean")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        source.write_text(text, encoding="utf-8")
        _build(source, workspace, server.url)
        first = asked(workspace, DOC)
        source.write_text(add_sentence(text, SCENE, SENTENCE), encoding="utf-8")
        server.reset()
        _build(source, workspace, server.url)
        rebuild = asked(workspace, DOC)
        sent = [r.body for r in server.chat_requests()]
        shutil.copytree(workspace.cache_dir / "llm", clean.cache_dir / "llm")
        _build(source, clean, server.url)
        from_clean = asked(clean, DOC)
    return {
        "sent": sent,
        "first": first,
        "rebuild": rebuild,
        "clean": from_clean,
        "workspace": workspace,
        "clean_ws": clean,
    }


def test_every_llm_stage_spreads_over_several_requests(revision) -> None:
    first: dict[str, StageCost] = revision["first"]
    for stage in ("extract_graph", "judge_continuity", "track_character_states", "relate_episodes"):
        assert first[stage].requests >= 4, (stage, first[stage])


def test_an_edit_of_one_scene_reasks_only_what_it_changed(revision) -> None:
    first, rebuild = revision["first"], revision["rebuild"]
    assert rebuild["extract_graph"].requests == 1  # the edited scene is read again, alone
    others: dict[str, int] = {}
    for body in revision["sent"]:
        schema = body["response_format"]["json_schema"]["name"]
        prompt = "\n".join(str(m.get("content")) for m in body["messages"])
        if schema in SHOW_THE_SCENE:
            assert SHOW_THE_SCENE[schema] in prompt, f"a {schema} request without the edited scene"
        else:
            others[schema] = others.get(schema, 0) + 1
    assert all(n <= MAX_OTHERS_OF.get(schema, MAX_OTHERS) for schema, n in others.items()), others
    assert rebuild["judge_continuity"].requests <= first["judge_continuity"].requests // 3
    assert total(rebuild).prompt_tokens <= 0.15 * total(first).prompt_tokens, (total(rebuild), total(first))


def test_the_rebuilt_tables_equal_a_clean_build_of_the_edited_text(revision) -> None:
    assert total(revision["clean"]).requests == 0  # the cache held every reply the clean build needed
    assert table_differences(revision["workspace"], revision["clean_ws"], DOC) == {}
