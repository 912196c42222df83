"""Downstream applications on the shared STAGE dev screenplays, offline (hashing embeddings:
nothing here depends on vectors): continuity candidates far fewer than all scene pairs (the
ratio per screenplay is printed), every final chain's scenes ground a shared cue, every
character state quotes a span of its scene, and the view renders in headless Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.tables.io import Workspace, read_frame
from tests.dev.conftest import nkw
from tests.fixtures.browser import count, dump_dom, png_pixels, screenshot

STAGE_DOCS = (
    "en049957b3c0b54085baddbec23e00506c",
    "en12839bdf037c46a0a3d9de0e50a6cbaa",
    "ch48a3d3de9f887c24c526ff5db17160702612afcb",
)
MAX_CANDIDATE_SHARE = 0.25


@pytest.fixture(scope="module")
def stage_workspace(dev_workspace) -> Workspace:
    """The dev sets built once by the session (the downstream stages are part of every build)."""
    return Workspace.at(dev_workspace[0])


@pytest.mark.parametrize("doc_id", STAGE_DOCS)
def test_candidates_are_far_fewer_than_all_pairs(stage_workspace, doc_id):
    counts = read_frame(stage_workspace, "continuity_counts", doc_id).iloc[0]
    ratio = counts.candidates / counts.all_pairs
    print(
        f"{doc_id}: {counts.n_scenes} scenes, {counts.all_pairs} pairs, "
        f"{counts.entity_pairs} sharing any entity, "
        f"{counts.candidates} candidates, ratio {ratio:.3f}"
    )
    assert counts.n_scenes >= 60 and 0 < ratio < MAX_CANDIDATE_SHARE
    judgments = read_frame(stage_workspace, "continuity_judgments", doc_id)
    assert len(judgments) == counts.candidates and (judgments["method"] == "offline_rule").all()


@pytest.mark.parametrize("doc_id", STAGE_DOCS)
def test_every_chain_shares_a_source_grounded_cue(stage_workspace, doc_id):
    text = read_frame(stage_workspace, "documents", doc_id).iloc[0]["text"]
    sections = read_frame(stage_workspace, "sections", doc_id).set_index("section_id")
    mentions = read_frame(stage_workspace, "mentions", doc_id)
    spans = set(
        zip(mentions["entity_id"], mentions["section_id"], mentions["char_start"], mentions["char_end"])
    )
    chains = read_frame(stage_workspace, "continuity_chains", doc_id)
    finals = chains[chains["kind"] == "final"]
    assert len(finals) >= 5
    for chain in finals.itertuples():
        assert len(chain.section_ids) >= 2 and len(chain.shared_entity_ids) > 0, chain.chain_id
        for cue in chain.cues:
            assert [s["section_id"] for s in cue["spans"]] == list(chain.section_ids)
            for span in cue["spans"]:
                section = sections.loc[span["section_id"]]
                assert section.char_start <= span["char_start"] < span["char_end"] <= section.char_end
                assert text[span["char_start"] : span["char_end"]] == span["surface"]
                assert (cue["entity_id"], span["section_id"], span["char_start"], span["char_end"]) in spans


@pytest.mark.parametrize("doc_id", STAGE_DOCS)
def test_every_state_quotes_a_span_of_its_scene(stage_workspace, doc_id):
    text = read_frame(stage_workspace, "documents", doc_id).iloc[0]["text"]
    sections = read_frame(stage_workspace, "sections", doc_id).set_index("section_id")
    states = read_frame(stage_workspace, "character_states", doc_id)
    assert len(states) >= 100 and states["section_id"].nunique() >= 40
    for row in states.itertuples():
        section = sections.loc[row.section_id]
        assert section.char_start <= row.char_start < row.char_end <= section.char_end, row.state_id
        assert text[row.char_start : row.char_end] == row.evidence and row.evidence.strip()


@pytest.mark.parametrize("doc_id", STAGE_DOCS)
def test_the_view_renders_in_chromium(stage_workspace, doc_id, tmp_path: Path):
    process, _ = nkw(
        "view", "--workspace", str(stage_workspace.root), "--doc", doc_id, "--out", str(tmp_path)
    )
    assert process.returncode == 0, process.stderr
    page = tmp_path / f"{doc_id}.html"
    width, height, distinct = png_pixels(screenshot(page, tmp_path / "shot.png"))
    assert distinct > 20
    dom = dump_dom(page, "#selftest", tmp_path)
    sections = read_frame(stage_workspace, "sections", doc_id)
    chains = read_frame(stage_workspace, "continuity_chains", doc_id)
    assert 'data-rendered="1"' in dom and 'data-png-bytes="' in dom
    assert count(dom, r'class="scene-col"') == (sections["section_kind"] == "scene").sum()
    assert count(dom, r'class="chain-card"') == (chains["kind"] == "final").sum()
    assert count(dom, r'class="char-row"') >= 10
