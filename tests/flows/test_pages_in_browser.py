"""The view and the report as people open them: each in headless Chromium at 800 and 1400 px wide
logs no console warning or error, is no wider than the window, keeps every control on screen,
sets every text (and every graph label) at a contrast of at least 4.5:1, and, in the report, no
table cell spills its content. The view's episode boxes hold their whole titles."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace, read_frame, write_table
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
