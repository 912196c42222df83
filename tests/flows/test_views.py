"""`nkw view` and `nkw export` on the bundled samples: the self-contained page rendered in
headless Chromium (screenshot not blank; rows, columns and chains in the DOM and the nodes the graph
library drew equal the tables; the entity graph's canvas is not blank, its legend lists the types,
search finds and centres an entity; the swimlane's PNG export works), and the graph files read back
by networkx."""

from __future__ import annotations

import base64
import csv
import json
import re
from pathlib import Path

import networkx as nx
import pytest

from flows.cli.main import main
from tasks.tables.io import read_frame
from tasks.views.bundle import entity_graph, episode_dag, load_bundle
from tasks.views.html import LIBRARIES, VENDOR, library_version
from tests.fixtures.browser import count, dump_dom, png_pixels, screenshot

DOC = "the_lighthouse_key"
PROSE = "the_fisherman_and_his_wife"


@pytest.fixture(scope="module")
def page(sample_workspace, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("view")
    assert main(["view", "--workspace", str(sample_workspace.root), "--doc", DOC, "--out", str(out)]) == 0
    return out / f"{DOC}.html"


def test_page_is_self_contained(page: Path):
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html) and "@import" not in html
    assert "<script src" not in html and "<link" not in html and "sourceMappingURL" not in html
    # Every graph library is inlined with its license texts (kept beside it in the vendor folder) and
    # named with its version; Cytoscape.js declares its own; the page stays under a megabyte.
    for library in LIBRARIES:
        assert (VENDOR / library.script).is_file() and f"{library.name} {library.version}" in html
        for name in library.licenses:
            notice = (VENDOR / name).read_text(encoding="utf-8").strip()
            assert "Permission is hereby granted" in notice and notice.splitlines()[0] in html, name
    assert library_version((VENDOR / LIBRARIES[0].script).read_text(encoding="utf-8")) == LIBRARIES[0].version
    assert len(html.encode("utf-8")) < 1_000_000


def test_page_renders_in_chromium_with_the_tables_counts(page: Path, sample_workspace, tmp_path: Path):
    shot = screenshot(page, tmp_path / "shot.png")
    width, height, distinct = png_pixels(shot)
    assert (width, height) == (1200, 900) and distinct > 20  # not a blank page
    dom = dump_dom(page, "#selftest", tmp_path)
    assert 'data-rendered="1"' in dom
    sections = read_frame(sample_workspace, "sections", DOC)
    scenes = set(sections.loc[sections["section_kind"] == "scene", "section_id"])
    entities = read_frame(sample_workspace, "entities", DOC)
    characters = set(
        entities.loc[(entities["entity_type"] == "character") & ~entities["is_proxy"], "entity_id"]
    )
    mentions = read_frame(sample_workspace, "mentions", DOC)
    present = set(
        mentions.loc[
            mentions["section_id"].isin(scenes) & mentions["entity_id"].isin(characters), "entity_id"
        ]
    )
    chains = read_frame(sample_workspace, "continuity_chains", DOC)
    assert count(dom, r'class="char-row"') == len(present) == 8
    assert count(dom, r'class="scene-col"') == len(scenes) == 16
    assert count(dom, r'class="chain-card"') == (chains["kind"] == "final").sum() == 2
    assert int(re.search(r'data-graph-nodes="(\d+)"', dom).group(1)) == len(entities)
    episodes = read_frame(sample_workspace, "episodes", DOC)
    assert int(re.search(r'data-dag-nodes="(\d+)"', dom).group(1)) == len(episodes)
    legend = re.findall(r'class="legend-type" data-type="(\w+)"', dom)
    assert sorted(legend) == sorted(set(entities["entity_type"]))
    states = read_frame(sample_workspace, "character_states", DOC)
    state_cells = set(zip(states["entity_id"], states["section_id"]))
    assert count(dom, r'class="cell on state"') == len(state_cells)
    png_bytes = int(re.search(r'data-png-bytes="(\d+)"', dom).group(1))
    assert png_bytes > 1000  # the swimlane PNG export produced an image


PROBE = """var nkw=window.nkw,finder=document.getElementById("search");
document.body.setAttribute("data-png",nkw.swimlanePng());
var sort=document.getElementById("sort");sort.value="count";sort.dispatchEvent(new Event("change"));
document.body.setAttribute("data-order",Array.prototype.map.call(laneBody.querySelectorAll("tr.char-row"),
function(r){return r.getAttribute("data-entity");}).join(","));
document.body.setAttribute("data-graph-png",nkw.graph.png({bg:"#ffffff",full:true}));
finder.value=%s;finder.dispatchEvent(new Event("change"));
var hit=nkw.graph.getElementById(document.body.getAttribute("data-search-hit")||"none");
var ext=nkw.graph.extent();
document.body.setAttribute("data-hit-state",JSON.stringify({hit:hit.hasClass("hit"),
inside:hit.position("x")>ext.x1&&hit.position("x")<ext.x2&&hit.position("y")>ext.y1&&hit.position("y")<ext.y2,
faded:nkw.graph.nodes(".faded").length}));
var typeBox=typeLegend.querySelector("input[value=character]");typeBox.checked=false;
typeBox.dispatchEvent(new Event("change"));
document.body.setAttribute("data-hidden",String(nkw.graph.nodes(".hidden").length));
document.body.setAttribute("data-rendered","1");"""


def _attribute(dom: str, name: str) -> str:
    return re.search(rf'{name}="([^"]*)"', dom).group(1).replace("&quot;", '"').replace("&amp;", "&")


def test_graph_canvas_search_filter_and_png_export_in_the_browser(page: Path, sample_workspace, tmp_path):
    entities = read_frame(sample_workspace, "entities", DOC)
    profiles = read_frame(sample_workspace, "entity_profiles", DOC).merge(entities, on="entity_id")
    tom = profiles[profiles["name"] == "Tom Hale"].iloc[0]
    probe = tmp_path / "probe.html"
    probe.write_text(
        page.read_text(encoding="utf-8").replace(
            'document.body.setAttribute("data-rendered", "1");', PROBE % json.dumps("tom h")
        ),
        encoding="utf-8",
    )
    dom = dump_dom(probe, "", tmp_path)
    data = base64.b64decode(re.search(r'data-png="data:image/png;base64,([^"]+)"', dom).group(1))
    width, height, distinct = png_pixels(data)
    # The names column is as wide as the longest name (whole names), then 16 scenes of 12 px.
    left = int(_attribute(dom, "data-png-left"))
    assert left > 16 and width == left + 16 * 12 + 10 and height == 24 + 8 * 12 + 10 and distinct > 3
    # The entity graph's canvas as the library drew it: many colours, not a blank image.
    drawn = base64.b64decode(re.search(r'data-graph-png="data:image/png;base64,([^"]+)"', dom).group(1))
    graph_width, graph_height, graph_distinct = png_pixels(drawn)
    assert graph_width > 300 and graph_height > 300 and graph_distinct > 100
    # Rows sorted by frequency: scenes per character, most first.
    mentions = read_frame(sample_workspace, "mentions", DOC)
    order = re.search(r'data-order="([^"]+)"', dom).group(1).split(",")
    scenes = mentions.groupby("entity_id")["section_id"].nunique()
    assert [scenes[e] for e in order] == sorted((scenes[e] for e in order), reverse=True)
    # Search: a partial name finds the entity, highlights it, brings it into view, shows its profile.
    assert _attribute(dom, "data-search-hit") == tom.entity_id
    state = json.loads(_attribute(dom, "data-hit-state"))
    assert state["hit"] and state["inside"] and 0 < state["faded"] < len(entities)
    panel = re.search(
        r'<div id="profile"[^>]*>(.*?)</div>\s*</div>\s*</div>\s*</section>', dom, re.DOTALL
    ).group(1)
    assert "Tom Hale" in panel and tom.summary[:40].replace("&", "&amp;") in panel
    hidden = int(re.search(r'data-hidden="(\d+)"', dom).group(1))
    assert hidden == (entities["entity_type"] == "character").sum()


def test_prose_page_says_continuity_is_for_screenplays(page: Path, sample_workspace, tmp_path: Path):
    out = tmp_path / "prose"
    assert main(["view", "--workspace", str(sample_workspace.root), "--doc", PROSE, "--out", str(out)]) == 0
    prose = dump_dom(out / f"{PROSE}.html", "", tmp_path)
    note = re.search(r'<div id="chain-note">(.*?)</div>', prose, re.DOTALL)
    assert "apply to screenplays" in note.group(1) and "prose" in note.group(1)
    screenplay = re.search(r'<div id="chain-note">(.*?)</div>', dump_dom(page, "", tmp_path), re.DOTALL)
    assert screenplay.group(1) == ""


def test_graph_section_screenshot_is_not_blank(page: Path, tmp_path: Path):
    shot = screenshot(page, tmp_path / "graph.png", fragment="#only-graph")
    width, height, distinct = png_pixels(shot)
    assert (width, height) == (1200, 900) and distinct > 60


@pytest.mark.parametrize("fmt", ["graphml", "gexf"])
def test_export_round_trips_through_networkx(sample_workspace, tmp_path: Path, fmt: str):
    out = tmp_path / f"graph.{fmt}"
    assert (
        main(
            [
                "export",
                "--workspace",
                str(sample_workspace.root),
                "--doc",
                DOC,
                "--format",
                fmt,
                "--out",
                str(out),
            ]
        )
        == 0
    )
    bundle = load_bundle(sample_workspace, DOC)
    reader = nx.read_graphml if fmt == "graphml" else nx.read_gexf
    for part, original in (("entities", entity_graph(bundle)), ("episodes", episode_dag(bundle))):
        loaded = reader(tmp_path / f"graph.{part}.{fmt}")
        assert (
            set(loaded.nodes) == set(original.nodes)
            and loaded.number_of_edges() == original.number_of_edges()
        )
        assert loaded.is_directed() == original.is_directed()
        for node, data in original.nodes(data=True):
            assert loaded.nodes[node]["label"] == data["label"]
            key = "entity_type" if part == "entities" else "first_ordinal"
            assert str(loaded.nodes[node][key]) == str(data[key])
        for source, target, data in original.edges(data=True):
            assert abs(float(loaded.edges[source, target]["weight"]) - data["weight"]) < 1e-9
    assert original.number_of_edges() > 0


def test_csv_export_and_unknown_document(sample_workspace, tmp_path: Path, capsys):
    out = tmp_path / "graph.csv"
    assert (
        main(
            [
                "export",
                "--workspace",
                str(sample_workspace.root),
                "--doc",
                DOC,
                "--format",
                "csv",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    bundle = load_bundle(sample_workspace, DOC)
    with open(tmp_path / "graph.entities.nodes.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["id"] for r in rows} == set(bundle["entities"]["entity_id"])
    with open(tmp_path / "graph.episodes.edges.csv", encoding="utf-8") as handle:
        edges = list(csv.DictReader(handle))
    assert len(edges) == episode_dag(bundle).number_of_edges()
    assert (
        main(["view", "--workspace", str(sample_workspace.root), "--doc", "nope", "--out", str(tmp_path)])
        == 2
    )
    assert "no document 'nope'" in capsys.readouterr().err
