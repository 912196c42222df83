"""Dependency rules between the project's parts, checked on the source (see README, "Where things are")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.layout.import_graph import import_cycles, package_edges, read_import_graph

ROOT = Path(__file__).resolve().parents[3]
BUILD_PACKAGES = (
    "tasks.ingest",
    "tasks.index",
    "tasks.graph",
    "tasks.canonicalize",
    "tasks.narrative",
    "tasks.facts",
    "tasks.hierarchy",
    "tasks.summaries",
)

# (who, what it must never import, why)
RULES = [
    (BUILD_PACKAGES, ("tasks.query",), "build stages never depend on query-time code"),
    (("tasks.query",), BUILD_PACKAGES, "query time reads the tables, never the build stages"),
    (
        ("tasks.llm",),
        BUILD_PACKAGES + ("tasks.query", "tasks.character_states", "tasks.continuity"),
        "how the model is asked is the same for every stage: no stage's code inside it",
    ),
    (("tasks.llm.client",), ("tasks.llm.requests", "tasks.llm.local"), "the client knows no stage's request"),
    (("tasks.llm.local",), ("tasks.llm.requests",), "serving a local model knows no stage's request"),
    (("schemas",), ("tasks", "flows"), "schemas are the bottom layer"),
    (("tasks",), ("flows",), "tasks never import the orchestration"),
    (
        ("flows.build", "flows.build_corpus"),
        ("flows.evaluation", "flows.serving", "flows.inspection", "flows.cli", "flows.answer_questions"),
        "building never depends on question answering, views or the command line",
    ),
    (
        ("flows.serving", "flows.inspection"),
        ("flows.build", "flows.build_corpus", "flows.evaluation", "flows.cli"),
        "serving and views read a built workspace: they never build, evaluate or parse arguments",
    ),
    (("flows.evaluation", "flows.evaluate_benchmark", "flows.ablate_flow"), ("flows.cli",),
     "evaluation is callable without the command line"),
]
FLOW_PACKAGES = ("build", "evaluation", "serving", "inspection", "cli")


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


def test_no_import_cycles_between_packages(graph):
    """A loop between two packages (each importing the other through different modules) is a cycle
    of parts even when no module imports itself back."""
    assert import_cycles(package_edges(graph)) == []


def test_the_rules_catch_a_breach():
    edges = {
        "tasks.graph.extract_graph": {"tasks.query.plan"},
        "schemas.config": {"tasks.stage"},
        "tasks.query.plan": {"tasks.hierarchy.saber"},
        "tasks.stage": {"flows.build.runner"},
    }
    assert len(breaches(edges)) == 4


def test_the_cycle_finder_finds_a_cycle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_flows_top_level_holds_the_flows_and_packages_by_purpose():
    flows = ROOT / "flows"
    modules = sorted(p.stem for p in flows.glob("*.py") if p.stem != "__init__")
    packages = sorted(p.name for p in flows.iterdir() if (p / "__init__.py").exists())
    assert len(modules) <= 8, modules
    assert packages == sorted(FLOW_PACKAGES)
