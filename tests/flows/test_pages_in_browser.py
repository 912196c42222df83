"""The view and the report as people open them: each in headless Chromium at 800 and 1400 px wide
logs no console warning or error, is no wider than the window, keeps every control on screen,
sets every text (and every graph label) at a contrast of at least 4.5:1, and, in the report, no
table cell spills its content. The view's episode boxes hold their whole titles; its summaries
follow the storyline DAG with every sentence of the tables and its scene (hover for the scene; a
storyline's title zooms the DAG to it), and a bundle without summary rows gets a page without them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace, as_list, read_frame, write_table
from tasks.views.bundle import load_bundle
from tasks.views.html import write_view
from tests.conftest import SAMPLES
from tests.fixtures import page_checks
from tests.fixtures.devtools import Browser, find_chromium

DOC = "the_lighthouse_key"
QUESTIONS = SAMPLES / f"{DOC}.questions.jsonl"
RENDERED = "document.body.getAttribute('data-rendered') === '1'"
WIDTHS = (800, 1400)
BUILD_CALL = {
    "attempt": 1, "doc_id": DOC, "stage": "extract_graph", "prompt_id": "extract_graph/combined",
    "prompt_version": "v1", "prompt_hash": "0" * 64, "model": "qwen2.5-0.5b-instruct", "prompt_tokens": 1900,
    "completion_tokens": 420, "cached_prompt_tokens": 1500, "latency_ms": 900.0, "finish_reason": "stop",
    "status": "ok", "error": None,
}  # fmt: skip


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


@pytest.fixture(scope="module")
def report_page(sample_workspace, tmp_path_factory) -> Path:
    """A report of three small runs on a copy of the samples: two systems, one setting changed."""
    root = tmp_path_factory.mktemp("report") / "ws"
    shutil.copytree(sample_workspace.root, root, ignore=shutil.ignore_patterns("variants", "runs"))
    base = ["eval", "-w", str(root), "--questions", str(QUESTIONS), "--embeddings", "hashing"]
    for extra in ([], ["--system", "hybrid"], ["--no-hierarchy"]):
        assert main([*base, "--no-prefect", "--quiet", "--limit", "3", *extra]) == 0
    # The samples build offline; one stage's calls as a model's make the build-cost section appear.
    calls = [{**BUILD_CALL, "item_id": f"chunk-{n}", "call_key": f"k{n}"} for n in range(3)]
    write_table(Workspace.at(root), "llm_calls", calls, DOC, "extract_graph")
    out = tmp_path_factory.mktemp("report-out")
    assert main(["report", "-w", str(root), "--out", str(out)]) == 0
    assert 'id="build_costs"' in (out / "report.html").read_text(encoding="utf-8")
    return out / "report.html"


def _check_page(page, widths_label: str) -> None:
    assert not page.problems(), f"{widths_label}: {[str(m) for m in page.problems()]}"
    assert page_checks.horizontal_overflow(page) == 0, widths_label
    assert page_checks.unreachable_controls(page) == [], widths_label
    assert page_checks.low_contrast_text(page) == [], widths_label


@pytest.mark.parametrize("width", WIDTHS)
def test_the_view_is_clean_and_readable_at_this_width(browser, view_page: Path, width: int):
    page = browser.open(view_page.resolve().as_uri(), width, 900, RENDERED)
    try:
        _check_page(page, f"view at {width} px")
        for graph in ("nkw.dag", "nkw.graph"):
            assert page_checks.low_contrast_labels(page, graph) == [], graph
        # The legend and the profile panel sit on screen beside or below the graph, never past its edge.
        for panel in ("#legend", "#profile"):
            right = page.evaluate(f"document.querySelector('{panel}').getBoundingClientRect().right")
            assert 0 < right <= width, panel
    finally:
        page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_is_clean_and_readable_at_this_width(browser, report_page: Path, width: int):
    page = browser.open(report_page.resolve().as_uri(), width, 900)
    try:
        _check_page(page, f"report at {width} px")
        assert page_checks.spilling_cells(page) == []
    finally:
        page.close()


def test_episode_boxes_hold_their_whole_titles(browser, view_page: Path, sample_workspace):
    page = browser.open(view_page.resolve().as_uri() + "#only-dag", 1400, 900, RENDERED)
    try:
        boxes = page.evaluate(
            """nkw.dag.nodes().map(function (n) {
                 var label = n.boundingBox({includeNodes: false, includeLabels: true});
                 var box = n.boundingBox({includeNodes: true, includeLabels: false});
                 return {title: n.data("title"), label: n.pstyle("label").strValue,
                         inside: label.x1 >= box.x1 && label.x2 <= box.x2
                                 && label.y1 >= box.y1 && label.y2 <= box.y2};
               })"""
        )
    finally:
        page.close()
    titles = read_frame(sample_workspace, "episodes", DOC)["title"]
    assert sorted(b["title"] for b in boxes) == sorted(titles)
    for box in boxes:
        # Broken into lines at spaces only: the same words, in order, none cut.
        assert box["label"].split() == box["title"].split(), box
        assert box["inside"], box


def test_the_checks_find_what_they_look_for(browser, tmp_path: Path):
    """Each check fails a page made to fail it, so an empty list above means something."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><body style='margin:0'>"
        "<p style='color:#aaa;background:#fff'>grey on white</p>"
        "<div style='width:1200px'>wide</div><button style='margin-left:900px'>far</button>"
        "<table><tr><td style='max-width:40px;white-space:nowrap;overflow:hidden'>"
        "a cell too long for itself</td></tr></table>"
        "<script>console.warn('careful')</script></body></html>",
        encoding="utf-8",
    )
    page = browser.open(bad.resolve().as_uri(), 800, 600)
    try:
        assert [m.text for m in page.problems()] == ["careful"]
        assert page_checks.horizontal_overflow(page) == 400
        assert [c["text"] for c in page_checks.low_contrast_text(page)] == ["grey on white"]
        assert len(page_checks.unreachable_controls(page)) == 1
        assert page_checks.spilling_cells(page) == ["a cell too long for itself"]
    finally:
        page.close()


def test_graph_label_check_sees_a_faint_label(browser, view_page: Path):
    page = browser.open(view_page.resolve().as_uri(), 1400, 900, RENDERED)
    try:
        page.evaluate("nkw.dag.nodes().style('color', '#ffd9b3'), 0")
        faint = page_checks.low_contrast_labels(page, "nkw.dag")
    finally:
        page.close()
    assert faint and all(f["ratio"] < page_checks.MIN_CONTRAST for f in faint)


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
    for width in WIDTHS:
        page = browser.open(page_file.resolve().as_uri(), width, 900, RENDERED)
        try:
            _check_page(page, f"view without summaries at {width} px")
            ids = page.evaluate("Array.from(document.querySelectorAll('main > section'), s => s.id)")
            links = page.evaluate("Array.from(document.querySelectorAll('nav a'), a => a.hash)")
        finally:
            page.close()
        assert "#summaries" not in links
        assert ids == ["swimlane", "chains", "dag", "graph"]
