"""SABER episode DAG cleaning: hand-made graphs, adjudicator faults, properties, size."""

from __future__ import annotations

import random
import time

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasks.hierarchy.saber import clean_episode_graph
from tasks.hierarchy.saber_model import (
    ACTIONS,
    DEFAULT_TYPE_WEIGHTS,
    STATUSES,
    EpisodeEdge,
    ShortcutQuestion,
    ShortcutVerdict,
    effective_weight,
    heuristic_adjudicator,
)


def E(rid: str, source: str, target: str, rtype: str = "causes", conf: float = 0.9) -> EpisodeEdge:
    return EpisodeEdge(rid, source, target, rtype, conf)


def removed(result, status: str) -> list[str]:
    return sorted(rid for rid, s in result.status.items() if s == status)


def kept_graph(result) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_edges_from((e.source, e.target) for e in result.kept_edges())
    return g


def always(decision: str):
    def judge(questions: list[ShortcutQuestion]) -> list[ShortcutVerdict]:
        return [ShortcutVerdict(decision, f"test says {decision}") for _ in questions]

    return judge


TRIANGLE_PATH = [E("r1", "a", "b", "causes", 0.9), E("r2", "b", "c", "causes", 0.9)]


# ---------------------------------------------------------------- basics


def test_effective_weight_is_confidence_times_type_weight() -> None:
    assert effective_weight(E("r", "a", "b", "precedes", 0.5)) == pytest.approx(
        0.5 * DEFAULT_TYPE_WEIGHTS["precedes"]
    )
    assert effective_weight(E("r", "a", "b", "causes", 0.5), {"causes": 0.2}) == pytest.approx(0.1)
    with pytest.raises(ValueError):
        effective_weight(E("r", "a", "b", "causes", 0.5), {"precedes": 1.0})


def test_defaults_follow_the_authors_ordering() -> None:
    w = DEFAULT_TYPE_WEIGHTS
    assert w["causes"] > w["precedes"] > w["elaborates"] > w["contrasts"] == 0.0


@pytest.mark.parametrize(
    "bad",
    [
        [E("r1", "a", "b"), E("r1", "b", "c")],  # duplicate relation_id
        [E("r1", "a", "b", "follows")],  # unknown relation type
        [E("r1", "a", "b", "causes", float("nan"))],
    ],
)
def test_invalid_input_is_rejected(bad: list[EpisodeEdge]) -> None:
    with pytest.raises(ValueError):
        clean_episode_graph(bad)


def test_unknown_mode_and_bad_hops_are_rejected() -> None:
    with pytest.raises(ValueError):
        clean_episode_graph([], mode="dag")
    with pytest.raises(ValueError):
        clean_episode_graph([], max_path_hops=1)


def test_empty_graph() -> None:
    for mode in ("raw", "heuristic", "saber"):
        result = clean_episode_graph([], mode=mode)
        assert result.status == {} and result.actions == [] and result.kept_edges() == []


# ---------------------------------------------------------------- cycles


def test_three_cycle_drops_only_the_weakest_edge() -> None:
    edges = [
        E("r1", "a", "b", "causes", 0.9),
        E("r2", "b", "c", "causes", 0.8),
        E("r3", "c", "a", "precedes", 0.5),
    ]
    for mode in ("heuristic", "saber"):
        result = clean_episode_graph(edges, mode=mode)
        assert removed(result, "removed_cycle") == ["r3"]
        cuts = [a for a in result.actions if a.action == "remove_cycle_edge"]
        assert [(a.rule, a.relation_id) for a in cuts] == [("scc_min_weight", "r3")]
        assert "component of 3 episodes" in cuts[0].reason


def test_overlapping_cycles_sharing_a_weak_edge_need_one_removal() -> None:
    edges = [
        E("r1", "a", "b", "elaborates", 0.5),  # shared by both cycles, weakest
        E("r2", "b", "c", "causes", 0.9),
        E("r3", "c", "a", "causes", 0.9),
        E("r4", "b", "d", "causes", 0.8),
        E("r5", "d", "a", "causes", 0.8),
    ]
    for mode in ("heuristic", "saber"):
        first = clean_episode_graph(edges, mode=mode)
        assert removed(first, "removed_cycle") == ["r1"]
        assert nx.is_directed_acyclic_graph(kept_graph(first))
        again = clean_episode_graph(list(reversed(edges)), mode=mode)
        assert again.status == first.status and again.actions == first.actions


def test_overlapping_cycles_with_a_strong_shared_edge_need_two_removals() -> None:
    edges = [
        E("r1", "a", "b", "causes", 1.0),  # shared but strong
        E("r2", "b", "c", "causes", 0.4),
        E("r3", "c", "a", "causes", 0.9),
        E("r4", "b", "d", "causes", 0.3),
        E("r5", "d", "a", "causes", 0.9),
    ]
    result = clean_episode_graph(edges, mode="heuristic")
    assert removed(result, "removed_cycle") == ["r2", "r4"]


def test_weight_ties_break_by_relation_id_whatever_the_input_order() -> None:
    edges = [E("r2", "a", "b", "precedes", 0.5), E("r1", "b", "a", "precedes", 0.5)]
    for mode in ("heuristic", "saber"):
        results = [clean_episode_graph(order, mode=mode) for order in (edges, edges[::-1])]
        assert removed(results[0], "removed_cycle") == ["r1"]
        assert results[0].status == results[1].status and results[0].actions == results[1].actions


def test_acyclic_graph_is_untouched_in_heuristic_mode() -> None:
    edges = TRIANGLE_PATH + [E("r3", "a", "c", "precedes", 0.9), E("r4", "c", "d", "elaborates", 0.2)]
    result = clean_episode_graph(edges, mode="heuristic")
    assert result.actions == []
    assert set(result.status.values()) == {"kept"}


def test_self_loops_and_duplicate_pairs() -> None:
    edges = [
        E("r1", "a", "a", "causes", 1.0),
        E("r2", "a", "b", "precedes", 0.9),
        E("r3", "a", "b", "causes", 0.9),
        E("r4", "a", "b", "causes", 0.9),
    ]
    result = clean_episode_graph(edges, mode="heuristic")
    assert result.status == {
        "r1": "removed_cycle",
        "r2": "removed_duplicate",
        "r3": "kept",
        "r4": "removed_duplicate",
    }
    assert [a.rule for a in result.actions] == ["self_loop", "duplicate_pair", "duplicate_pair"]
    raw = clean_episode_graph(edges, mode="raw")
    assert set(raw.status.values()) == {"kept"} and raw.actions == []


def test_contrasts_are_auxiliary_and_never_counted() -> None:
    edges = TRIANGLE_PATH + [
        E("c1", "b", "a", "contrasts", 1.0),  # would close a cycle if it were progression
        E("c2", "a", "c", "contrasts", 1.0),  # would be a triangle shortcut
        E("c3", "c", "c", "contrasts", 1.0),
    ]
    for mode in ("raw", "heuristic", "saber"):
        result = clean_episode_graph(edges, mode=mode)
        assert removed(result, "auxiliary") == ["c1", "c2", "c3"]
        assert not any(a.relation_id.startswith("c") for a in result.actions)
        assert result.counts() == {**dict.fromkeys(STATUSES, 0), "kept": 2, "auxiliary": 3}
        assert [e.relation_id for e in result.kept_edges()] == ["r1", "r2"]


def test_cycle_with_marked_shortcut_drops_the_shortcut_first_in_saber_only() -> None:
    edges = TRIANGLE_PATH + [E("r3", "a", "c", "causes", 0.8), E("r4", "c", "a", "causes", 0.3)]
    heuristic = clean_episode_graph(edges, mode="heuristic")
    assert removed(heuristic, "removed_cycle") == ["r4"]
    saber = clean_episode_graph(edges, mode="saber")
    marks = [a for a in saber.actions if a.action == "mark_shortcut"]
    assert [(a.relation_id, a.indirect_path) for a in marks] == [("r3", ("a", "b", "c"))]
    cuts = [(a.relation_id, a.rule) for a in saber.actions if a.action == "remove_cycle_edge"]
    assert cuts[0] == ("r3", "scc_min_weight_shortcut")
    assert cuts[1:] == [("r4", "scc_min_weight")]  # the 3-cycle a->b->c->a remains and still needs a cut
    assert nx.is_directed_acyclic_graph(kept_graph(saber))


# ---------------------------------------------------------------- shortcuts


def test_heuristic_adjudicator_removes_a_precedes_shortcut() -> None:
    result = clean_episode_graph(TRIANGLE_PATH + [E("r3", "a", "c", "precedes", 0.9)], mode="saber")
    assert result.status["r3"] == "removed_shortcut"
    assert [a.action for a in result.actions] == ["mark_shortcut", "adjudicate", "remove_shortcut"]
    assert result.actions[-1].indirect_path == ("a", "b", "c") and result.actions[-1].rule == "llm_redundant"
    assert [a.step for a in result.actions] == [1, 2, 3]
    assert (
        clean_episode_graph(TRIANGLE_PATH + [E("r3", "a", "c", "precedes", 0.9)], mode="heuristic").status[
            "r3"
        ]
        == "kept"
    )


def test_heuristic_adjudicator_keeps_a_causes_shortcut_as_uncertain() -> None:
    result = clean_episode_graph(TRIANGLE_PATH + [E("r3", "a", "c", "causes", 0.9)], mode="saber")
    assert result.status["r3"] == "kept"
    assert [(a.action, a.rule) for a in result.actions[1:]] == [
        ("adjudicate", "llm_uncertain"),
        ("keep_shortcut", "llm_uncertain"),
    ]


def test_heuristic_adjudicator_verdicts() -> None:
    path = (E("p1", "a", "b", "precedes", 0.9), E("p2", "b", "c", "elaborates", 0.9))
    q = lambda edge, hops=path: ShortcutQuestion(edge, ("a", "b", "c"), hops)  # noqa: E731
    verdicts = heuristic_adjudicator(
        [
            q(E("d", "a", "c", "elaborates", 0.9)),  # any progression path covers elaborates; 0.315 <= 0.315
            q(E("d", "a", "c", "precedes", 0.5)),  # elaborates on the path does not imply precedes
            q(E("d", "a", "c", "elaborates", 1.0)),  # the direct edge is stronger than the weakest link
            q(E("d", "a", "c", "elaborates", 0.1), ()),  # no path relations to compare against
        ]
    )
    assert [v.decision for v in verdicts] == ["redundant", "uncertain", "necessary", "uncertain"]


@pytest.mark.parametrize(
    ("decision", "status", "rule"),
    [
        ("necessary", "kept", "llm_necessary"),
        ("uncertain", "kept", "llm_uncertain"),
        ("redundant", "removed_shortcut", "llm_redundant"),
        ("REDUNDANT ", "removed_shortcut", "llm_redundant"),
    ],
)
def test_injected_adjudicator_decides(decision: str, status: str, rule: str) -> None:
    seen: list[list[ShortcutQuestion]] = []

    def judge(questions: list[ShortcutQuestion]) -> list[ShortcutVerdict]:
        seen.append(questions)
        return always(decision)(questions)

    result = clean_episode_graph(TRIANGLE_PATH + [E("r3", "a", "c", "causes", 0.9)], adjudicate=judge)
    assert result.status["r3"] == status
    assert result.actions[-1].rule == rule
    assert len(seen) == 1 and [(q.edge.relation_id, q.indirect_path) for q in seen[0]] == [
        ("r3", ("a", "b", "c"))
    ]
    assert [p.relation_id for p in seen[0][0].path_edges] == ["r1", "r2"]


@pytest.mark.parametrize(
    "output",
    [
        [],  # too few
        [ShortcutVerdict("redundant", "x"), ShortcutVerdict("redundant", "y")],  # too many
        [ShortcutVerdict("delete", "unknown decision")],
        [E("r9", "c", "a", "causes", 1.0)],  # tries to hand back a (reversed) edge
        [
            ShortcutVerdict("redundant", "ok"),
            E("r9", "c", "a", "causes", 1.0),
            E("r10", "a", "z", "causes", 1.0),
        ],
        None,
        "redundant",
    ],
)
def test_bad_adjudicator_cannot_change_the_graph(output: object) -> None:
    edges = TRIANGLE_PATH + [E("r3", "a", "c", "causes", 0.9)]
    result = clean_episode_graph(edges, adjudicate=lambda questions: output)  # type: ignore[arg-type,return-value]
    assert result.status == {"r1": "kept", "r2": "kept", "r3": "kept"}
    judged = [a for a in result.actions if a.action == "adjudicate"]
    assert [a.rule for a in judged] == ["llm_uncertain"] and "uncertain" in judged[0].reason
    assert {(a.source, a.target) for a in result.actions} == {("a", "c")}


def test_adjudicator_errors_propagate() -> None:
    def broken(questions: list[ShortcutQuestion]) -> list[ShortcutVerdict]:
        raise RuntimeError("LLM down")

    with pytest.raises(RuntimeError):
        clean_episode_graph(TRIANGLE_PATH + [E("r3", "a", "c")], adjudicate=broken)


def test_support_check_can_veto_a_removal() -> None:
    calls: list[tuple[str, tuple[str, ...]]] = []

    def support(edge: EpisodeEdge, path: tuple[str, ...]) -> bool:
        calls.append((edge.relation_id, path))
        return False

    result = clean_episode_graph(
        TRIANGLE_PATH + [E("r3", "a", "c")], adjudicate=always("redundant"), support_preserved=support
    )
    assert result.status["r3"] == "kept" and result.actions[-1].rule == "support_not_preserved"
    assert calls == [("r3", ("a", "b", "c"))]


def test_a_removal_never_breaks_the_path_of_an_earlier_one() -> None:
    # With triangles only, a->b is covered by a->x->b and a->c by a->b->c: both cannot go.
    edges = [
        E("r1", "a", "x", "causes", 1.0),
        E("r2", "x", "b", "causes", 1.0),
        E("r3", "a", "b", "causes", 0.6),
        E("r4", "b", "c", "causes", 1.0),
        E("r5", "a", "c", "causes", 0.5),
    ]
    result = clean_episode_graph(edges, adjudicate=always("redundant"), max_path_hops=2)
    assert removed(result, "removed_shortcut") == ["r5"]  # weakest first; its path a->b->c then protects r3
    vetoed = [a for a in result.actions if a.rule == "support_not_preserved"]
    assert [a.relation_id for a in vetoed] == ["r3"]
    final = kept_graph(result)
    for action in result.actions:
        if action.action == "remove_shortcut":
            assert all(final.has_edge(a, b) for a, b in zip(action.indirect_path, action.indirect_path[1:]))


def test_strongest_indirect_path_is_recorded() -> None:
    # Same graph with 3-hop paths allowed: a->c is justified by a->x->b->c (weakest link 1.0, not 0.6),
    # which leaves a->b removable too, and reachability a~>c still holds.
    edges = [
        E("r1", "a", "x", "causes", 1.0),
        E("r2", "x", "b", "causes", 1.0),
        E("r3", "a", "b", "causes", 0.6),
        E("r4", "b", "c", "causes", 1.0),
        E("r5", "a", "c", "causes", 0.5),
    ]
    result = clean_episode_graph(edges, adjudicate=always("redundant"))
    assert removed(result, "removed_shortcut") == ["r3", "r5"]
    assert [a.indirect_path for a in result.actions if a.action == "remove_shortcut"] == [
        ("a", "x", "b", "c"),
        ("a", "x", "b"),
    ]
    assert nx.has_path(kept_graph(result), "a", "c")


def test_longer_indirect_paths_respect_max_path_hops() -> None:
    chain = [
        E("r1", "a", "b", "causes", 1.0),
        E("r2", "b", "c", "causes", 1.0),
        E("r3", "c", "d", "causes", 1.0),
    ]
    direct = E("r4", "a", "d", "precedes", 0.5)
    assert clean_episode_graph(chain + [direct]).status["r4"] == "removed_shortcut"
    short = clean_episode_graph(chain + [direct], max_path_hops=2)
    assert short.status["r4"] == "kept" and short.actions == []


def test_adjudication_budget() -> None:
    calls: list[int] = []

    def judge(questions: list[ShortcutQuestion]) -> list[ShortcutVerdict]:
        calls.append(len(questions))
        return always("redundant")(questions)

    edges = TRIANGLE_PATH + [E("r3", "a", "c", "precedes", 0.9)]
    result = clean_episode_graph(edges, adjudicate=judge, max_adjudications=0)
    assert calls == [] and result.status["r3"] == "kept"
    assert [(a.action, a.rule) for a in result.actions[1:]] == [("keep_shortcut", "budget_exhausted")]


# ---------------------------------------------------------------- properties

NODES = [f"n{i:02d}" for i in range(12)]
TYPES = ("causes", "precedes", "elaborates", "contrasts")


@st.composite
def edge_lists(draw: st.DrawFn) -> list[EpisodeEdge]:
    """Narrative-shaped graphs: mostly forward edges (many triangles), some backward ones (cycles)."""
    nodes = NODES[: draw(st.integers(3, len(NODES)))]  # few nodes -> dense graphs
    confidence = st.one_of(st.sampled_from([0.2, 0.5, 0.5, 0.8, 1.0]), st.floats(0.0, 1.0))
    raw = draw(
        st.lists(
            st.tuples(
                st.sampled_from(nodes),
                st.sampled_from(nodes),
                st.integers(0, 4),
                st.sampled_from(TYPES),
                confidence,
            ),
            max_size=40,
        )
    )
    edges = []
    for i, (a, b, back, typ, c) in enumerate(raw):
        source, target = (max(a, b), min(a, b)) if back == 0 else (min(a, b), max(a, b))
        edges.append(EpisodeEdge(f"r{i:03d}", source, target, typ, c))
    return edges


PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(edges=edge_lists(), data=st.data())
def test_property_cleaning_invariants(edges: list[EpisodeEdge], data: st.DataObject) -> None:
    by_id = {e.relation_id: e for e in edges}
    shuffled = data.draw(st.permutations(edges))
    # An adjudicator that calls everything redundant gives the most removals, the hardest case;
    # triangles only (2 hops) make removals compete for the same path edges.
    for mode, judge, hops in (
        ("heuristic", None, 3),
        ("saber", None, 3),
        ("saber", always("redundant"), 3),
        ("saber", always("redundant"), 2),
    ):
        result = clean_episode_graph(edges, mode=mode, adjudicate=judge, max_path_hops=hops)
        kept = result.kept_edges()
        assert set(result.status) == set(by_id) and set(result.status.values()) <= set(STATUSES)
        assert all(by_id[e.relation_id] == e and e.relation_type != "contrasts" for e in kept)  # kept ⊆ input
        assert all(
            by_id[r].relation_type == "contrasts" for r, s in result.status.items() if s == "auxiliary"
        )
        graph = kept_graph(result)
        assert nx.is_directed_acyclic_graph(graph)
        assert len({(e.source, e.target) for e in kept}) == len(kept)
        assert [a.step for a in result.actions] == list(range(1, len(result.actions) + 1))
        assert {a.action for a in result.actions} <= set(ACTIONS)
        for a in result.actions:
            if a.action == "remove_shortcut":  # reachability u~>v survives, via the recorded path
                assert mode == "saber" and nx.has_path(graph, a.source, a.target)
                assert all(graph.has_edge(x, y) for x, y in zip(a.indirect_path, a.indirect_path[1:]))
        again = clean_episode_graph(shuffled, mode=mode, adjudicate=judge, max_path_hops=hops)
        assert again.status == result.status and again.actions == result.actions


@PROPS
@given(edges=edge_lists())
def test_property_raw_mode_keeps_everything(edges: list[EpisodeEdge]) -> None:
    result = clean_episode_graph(edges, mode="raw")
    assert result.actions == []
    assert result.status == {
        e.relation_id: ("auxiliary" if e.relation_type == "contrasts" else "kept") for e in edges
    }


def reference_cycle_removals(edges: list[EpisodeEdge], marked: set[str]) -> set[str]:
    """Algorithm 1 lines 3-7 taken literally: recompute SCCs after every single removal."""
    best: dict[tuple[str, str], EpisodeEdge] = {}
    w = {e.relation_id: effective_weight(e) for e in edges}
    for e in sorted(edges, key=lambda e: e.relation_id):
        if e.source != e.target and (
            (e.source, e.target) not in best or w[e.relation_id] > w[best[(e.source, e.target)].relation_id]
        ):
            best[(e.source, e.target)] = e
    g = nx.DiGraph()
    for (u, v), e in best.items():
        g.add_edge(u, v, rid=e.relation_id)
    gone = set()
    while True:
        sccs = sorted((sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1))
        if not sccs:
            return gone
        comp = set(sccs[0])
        inside = [(d["rid"], u, v) for u, v, d in g.edges(data=True) if u in comp and v in comp]
        rid, u, v = min(inside, key=lambda t: (t[0] not in marked, w[t[0]], t[0]))
        g.remove_edge(u, v)
        gone.add(rid)


@PROPS
@given(edges=edge_lists())
def test_property_cycle_breaking_matches_the_literal_algorithm(edges: list[EpisodeEdge]) -> None:
    progression = [e for e in edges if e.relation_type != "contrasts"]
    heuristic = clean_episode_graph(edges, mode="heuristic")
    cycle_cut = {
        r for r, s in heuristic.status.items() if s == "removed_cycle" and r not in _self_loops(edges)
    }
    assert cycle_cut == reference_cycle_removals(progression, set())
    saber = clean_episode_graph(edges, mode="saber")
    marked = {a.relation_id for a in saber.actions if a.action == "mark_shortcut"}
    cycle_cut = {r for r, s in saber.status.items() if s == "removed_cycle" and r not in _self_loops(edges)}
    assert cycle_cut == reference_cycle_removals(progression, marked)


def _self_loops(edges: list[EpisodeEdge]) -> set[str]:
    return {e.relation_id for e in edges if e.source == e.target}


# ---------------------------------------------------------------- size


def test_document_sized_graph_is_fast() -> None:
    rng = random.Random(11)
    edges = [
        EpisodeEdge(
            f"r{i:05d}",
            f"e{rng.randrange(300):03d}",
            f"e{rng.randrange(300):03d}",
            rng.choice(TYPES[:3]),
            round(rng.random(), 2),
        )
        for i in range(1500)
    ]
    for mode in ("heuristic", "saber"):
        start = time.perf_counter()
        result = clean_episode_graph(edges, mode=mode)
        assert time.perf_counter() - start < 2.0
        assert nx.is_directed_acyclic_graph(kept_graph(result))
