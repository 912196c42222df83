"""The view's summaries as people open them, in headless Chromium: they follow the storyline DAG,
the work summary and each storyline's in story order with every sentence of the tables and its
scene (hover for the scene; a storyline's title zooms the DAG to it), and a bundle with no summary
rows gets a page without the section that is as clean as the full one (tests/flows/
test_pages_in_browser.py checks the full page, summaries included, at 800 and 1400 px)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.tables.io import as_list, read_frame
from tasks.views.bundle import load_bundle
from tasks.views.html import write_view
from tests.fixtures import page_checks
from tests.fixtures.devtools import Browser, find_chromium

DOC = "the_lighthouse_key"
RENDERED = "document.body.getAttribute('data-rendered') === '1'"


@pytest.fixture(scope="module")
def browser():
    if not find_chromium():
        pytest.skip("headless Chromium not installed (apt-get install chromium)")
    with Browser() as opened:
        yield opened


@pytest.fixture(scope="module")
def view_page(sample_workspace, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("view")
    assert main(["view", "--workspace", str(sample_workspace.root), "--doc", DOC, "--out", str(out)]) == 0
    return out / f"{DOC}.html"


# What the summaries section shows: the order of the page's sections, each summary's sentences with
# their scene tags, and what hovering the first tag and clicking the last storyline's title do.
SUMMARIES_JS = """(function () {
  var sentences = function (p) {
    return Array.from(p.querySelectorAll(".summary-sentence"), function (s) {
      return { text: s.firstChild.textContent.trim(),
               scenes: Array.from(s.querySelectorAll(".scene-ref"), function (r) {
                 return [r.getAttribute("data-scene"), r.textContent]; }) };
    });
  };
  var cards = document.querySelectorAll(".storyline-summary");
  var ref = document.querySelector("#work-summary .scene-ref"), box = ref.getBoundingClientRect();
  ref.dispatchEvent(new MouseEvent("mousemove", { clientX: box.left + 2, clientY: box.top + 2 }));
  var tip = document.getElementById("tip").textContent;
  cards[cards.length - 1].querySelector(".storyline-head a").click();
  return {
    sections: Array.from(document.querySelectorAll("main > section"), function (s) { return s.id; }),
    nav: Array.from(document.querySelectorAll("nav a"), function (a) { return a.getAttribute("href"); }),
    work: sentences(document.querySelector("#work-summary .summary-text")),
    storylines: Array.from(cards, function (c) {
      return { head: c.querySelector(".storyline-head").textContent, sentences: sentences(c) }; }),
    tip: tip,
    zoomed: document.body.getAttribute("data-storyline"),
    lit: nkw.dag.nodes().not(".faded").length
  };
})()"""


def _expected_sentences(quotes, summary_id: str, numbers: dict[str, int]) -> list[dict]:
    mine = quotes[quotes["summary_id"] == summary_id].sort_values("position")
    return [
        {"text": " ".join(q.text.split()), "scenes": [[q.section_id, f"sc {numbers[q.section_id]}"]]}
        for q in mine.itertuples()
    ]


def test_the_summaries_follow_the_dag_each_sentence_with_its_scene(
    browser, view_page: Path, sample_workspace
):
    page = browser.open(view_page.resolve().as_uri(), 1400, 900, RENDERED)
    try:
        shown = page.evaluate(SUMMARIES_JS)
        assert not page.problems(), [str(m) for m in page.problems()]
    finally:
        page.close()
    summaries = read_frame(sample_workspace, "summaries", DOC)
    quotes = read_frame(sample_workspace, "summary_quotes", DOC)
    sections = read_frame(sample_workspace, "sections", DOC).sort_values("ordinal")
    scenes = sections[sections["section_kind"] == "scene"]["section_id"]
    numbers = {section_id: n for n, section_id in enumerate(scenes, start=1)}
    assert shown["sections"].index("summaries") == shown["sections"].index("dag") + 1
    assert "#summaries" in shown["nav"]
    work = summaries[summaries["level"] == "work"].iloc[0]
    assert shown["work"] == _expected_sentences(quotes, work.summary_id, numbers)
    assert len(shown["work"]) == work.n_quotes > 1
    lines = summaries[summaries["level"] == "storyline"].sort_values("ordinal")
    assert len(shown["storylines"]) == len(lines) > 1
    for card, line in zip(shown["storylines"], lines.itertuples()):
        assert f"{line.origin}: {line.title}" in card["head"]
        assert card["sentences"] == _expected_sentences(quotes, line.summary_id, numbers)
    first = shown["work"][0]["scenes"][0][0]
    heading = sections.loc[sections["section_id"] == first, "heading"].iloc[0]
    assert shown["tip"].startswith(f"Scene {numbers[first]}: {heading}")
    # The last storyline's title zooms the DAG to its episodes: they alone stay lit.
    storylines = read_frame(sample_workspace, "storylines", DOC).sort_values("ordinal")
    lane = list(storylines["storyline_id"]).index(lines.iloc[-1].subject_id)
    assert shown["zoomed"] == str(lane)
    assert shown["lit"] == len(as_list(storylines.iloc[lane].episode_ids))


def test_a_bundle_without_summaries_has_no_summaries_section(browser, sample_workspace, tmp_path: Path):
    bundle = load_bundle(sample_workspace, DOC)
    bundle.tables["summaries"] = bundle["summaries"].iloc[0:0]
    page_file = write_view(bundle, tmp_path)
    for width in (800, 1400):
        page = browser.open(page_file.resolve().as_uri(), width, 900, RENDERED)
        try:
            assert not page.problems(), [str(m) for m in page.problems()]
            assert page_checks.horizontal_overflow(page) == 0
            assert page_checks.unreachable_controls(page) == []
            ids = page.evaluate("Array.from(document.querySelectorAll('main > section'), s => s.id)")
            links = page.evaluate("Array.from(document.querySelectorAll('nav a'), a => a.hash)")
        finally:
            page.close()
        assert "summaries" not in ids and "#summaries" not in links
        assert ids == ["swimlane", "chains", "dag", "graph"]
