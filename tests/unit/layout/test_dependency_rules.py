"""Dependency rules between the project's parts, checked on the source (see README, "Where things are")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.layout.import_graph import import_cycles, read_import_graph

ROOT = Path(__file__).resolve().parents[3]
BUILD_PACKAGES = (
    "tasks.ingest",
    "tasks.index",
    "tasks.graph",
    "tasks.canonicalize",
    "tasks.narrative",
    "tasks.facts",
    "tasks.hierarchy",
)

# (who, what it must never import, why)
RULES = [
    (BUILD_PACKAGES, ("tasks.query",), "build stages never depend on query-time code"),
    (("tasks.query",), BUILD_PACKAGES, "query time reads the tables, never the build stages"),
    (("schemas",), ("tasks", "flows"), "schemas are the bottom layer"),
    (("tasks",), ("flows",), "tasks never import the orchestration"),
]


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def breaches(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for sources, forbidden, why in RULES:
        for module, targets in sorted(edges.items()):
            if _under(module, sources):
                found += [f"{module} -> {t} ({why})" for t in sorted(targets) if _under(t, forbidden)]
    return found


@pytest.fixture(scope="module")
def graph():
    return read_import_graph(ROOT)


def test_no_part_imports_what_its_rules_forbid(graph):
    assert breaches(graph.edges) == []


def test_no_import_cycles(graph):
    assert import_cycles(graph.edges) == []


def test_the_rules_catch_a_breach():
    edges = {
        "tasks.graph.extract_graph": {"tasks.query.plan"},
        "schemas.config": {"tasks.stage"},
        "tasks.query.plan": {"tasks.hierarchy.saber"},
        "tasks.stage": {"flows.runner"},
    }
    assert len(breaches(edges)) == 4


def test_the_cycle_finder_finds_a_cycle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
