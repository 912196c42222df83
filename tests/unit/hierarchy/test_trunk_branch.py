"""Trunk–branch storyline segmentation: trie, path bounds, splitting, greedy selection."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasks.hierarchy.trunk_branch import (
    Chain,
    StorylineSettings,
    Trie,
    candidate_chains,
    enumerate_paths,
    overlap,
    select_storylines,
)


def chain_edges(*chains: str) -> list[tuple[str, str]]:
    """Edges along each chain written as a string of one-letter episode ids."""
    return sorted({(a, b) for c in chains for a, b in zip(c, c[1:])})


def assert_follows_edges(chains: list[Chain] | list[tuple[str, ...]], edges: list[tuple[str, str]]) -> None:
    edge_set = set(edges)
    for c in chains:
        ids = c.episode_ids if isinstance(c, Chain) else c
        assert all((a, b) in edge_set for a, b in zip(ids, ids[1:])), ids
        assert len(set(ids)) == len(ids)


# ---------------------------------------------------------------- trie


def test_shared_prefix_becomes_one_trunk_and_branches_start_at_the_branch_node() -> None:
    trie = Trie([tuple("ABCD"), tuple("ABCE")])
    assert trie.trunks() == [tuple("ABC")]
    assert trie.branches() == [tuple("CD"), tuple("CE")]
    assert trie.terminals() == [tuple("ABCD"), tuple("ABCE")]


def test_nested_branch_points() -> None:
    trie = Trie([tuple("ABCDEF"), tuple("ABCDEG"), tuple("ABCXY")])
    assert trie.trunks() == [tuple("ABC"), tuple("CDE")]  # the second trunk is shared by two paths after C
    assert trie.branches() == [tuple("CDE"), tuple("EF"), tuple("EG"), tuple("CXY")]
    assert trie.terminals() == [tuple("ABCDEF"), tuple("ABCDEG"), tuple("ABCXY")]


def test_trie_without_sharing_has_no_trunks() -> None:
    trie = Trie()
    trie.insert(tuple("ABC"))
    trie.insert(tuple("XY"))
    trie.insert(())
    assert trie.trunks() == [] and trie.branches() == []
    assert trie.terminals() == [tuple("ABC"), tuple("XY")]


def test_a_path_ending_inside_another_is_a_branch_point() -> None:
    trie = Trie([tuple("ABC"), tuple("ABCDE")])
    assert trie.trunks() == [tuple("ABC")]
    assert trie.branches() == [tuple("CDE")]


# ---------------------------------------------------------------- path enumeration


def test_paths_are_source_to_sink_and_isolated_nodes_are_single_paths() -> None:
    edges = chain_edges("ABD", "ACD")
    paths = enumerate_paths(edges, ["Z", "A"])
    assert paths == [tuple("ABD"), ("Z",), tuple("ACD")]  # roots are served round-robin
    assert enumerate_paths([], []) == []
    assert enumerate_paths([], ["b", "a"]) == [("a",), ("b",)]


def test_node_order_decides_path_order() -> None:
    edges = chain_edges("AB", "AC")
    assert enumerate_paths(edges, [], node_order={"C": 0, "B": 1}) == [tuple("AC"), tuple("AB")]


def test_long_chains_are_cut_at_max_depth_and_resumed() -> None:
    ids = [f"e{i:02d}" for i in range(30)]
    edges = list(zip(ids, ids[1:]))
    paths = enumerate_paths(edges, [], StorylineSettings(max_depth=12))
    assert all(len(p) <= 12 for p in paths)
    assert {n for p in paths for n in p} == set(ids)
    assert paths[0][0] == "e00" and paths[1][0] == paths[0][-1]  # resumed where it was cut


def test_path_budget_is_respected_and_every_episode_still_covered() -> None:
    # A layered DAG with 4^6 source-to-sink paths.
    layers = [[f"L{i}{j}" for j in range(4)] for i in range(7)]
    edges = [(a, b) for i in range(6) for a in layers[i] for b in layers[i + 1]]
    paths = enumerate_paths(edges, [], StorylineSettings(max_paths=40))
    assert len(paths) <= 40
    assert {n for p in paths for n in p} == {n for layer in layers for n in layer}
    assert_follows_edges(paths, edges)


def test_cyclic_graph_terminates_with_simple_paths() -> None:
    # The ablation's raw setting keeps cycles; enumeration must still end.
    edges = chain_edges("ABCA", "CD")
    paths = enumerate_paths(edges, [])
    assert paths and all(len(set(p)) == len(p) for p in paths)
    assert {n for p in paths for n in p} == set("ABCD")
    assert_follows_edges(paths, edges)


# ---------------------------------------------------------------- candidates and splitting


def test_candidates_cover_trunks_branches_and_terminals() -> None:
    paths = [tuple("ABCDEF"), tuple("ABCDEG"), tuple("ABCXY")]
    assert set(candidate_chains(paths)) == {
        tuple("ABC"),
        tuple("CDE"),
        tuple("EF"),
        tuple("EG"),
        tuple("CXY"),
        tuple("ABCDEF"),
        tuple("ABCDEG"),
        tuple("ABCXY"),
    }


def test_long_chain_is_split_at_the_lowest_support_edge() -> None:
    ids = tuple(f"e{i}" for i in range(10))
    support = {(a, b): 1.0 for a, b in zip(ids, ids[1:])}
    support[("e5", "e6")] = 0.1
    chains = candidate_chains([ids], StorylineSettings(max_chain_length=8), edge_support=support)
    assert chains == [ids[:6], ids[6:]]


def test_long_chain_is_split_at_a_branch_point_first() -> None:
    main = tuple(f"e{i}" for i in range(10))
    side = main[:3] + ("x",)  # e2 diverges: the cut goes right after it
    support = {("e5", "e6"): 0.1}
    chains = candidate_chains([main, side], StorylineSettings(max_chain_length=8), edge_support=support)
    assert main[:3] in chains and main[3:] in chains
    assert all(len(c) <= 8 for c in chains)


def test_without_preferences_the_split_is_balanced_and_pieces_fit() -> None:
    ids = tuple(f"e{i:02d}" for i in range(20))
    chains = candidate_chains([ids], StorylineSettings(max_chain_length=5))
    assert all(2 <= len(c) <= 5 for c in chains)
    assert [n for c in chains for n in c] == list(ids)  # pieces tile the chain in order


# ---------------------------------------------------------------- selection


def test_selection_on_a_trunk_with_a_side_arc() -> None:
    edges = chain_edges("ABCDEF", "ABCDEG", "CXY")
    chosen = select_storylines(edges, [])
    assert [c.episode_ids for c in chosen] == [tuple("ABCDEF"), tuple("CXY")]
    assert [c.origin for c in chosen] == ["terminal", "branch"]
    first, second = chosen
    assert first.coverage == pytest.approx(6 / 9) and first.novelty == 1.0
    assert second.novelty == pytest.approx(2 / 3) and first.score > second.score


def test_empty_and_isolated_inputs() -> None:
    assert select_storylines([], []) == []
    assert select_storylines([], ["a", "b"]) == []  # single episodes cannot give m=2 new episodes
    chosen = select_storylines([("a", "b")], ["z", "y"])
    assert [c.episode_ids for c in chosen] == [("a", "b")]
    assert chosen[0].coverage == pytest.approx(0.5)
    assert select_storylines([("a", "b")], [], StorylineSettings(max_storylines=0)) == []


def test_max_storylines_caps_the_output() -> None:
    edges = [(f"a{i}", f"b{i}") for i in range(30)]
    assert len(select_storylines(edges, [], StorylineSettings(max_storylines=4))) == 4


def test_node_order_breaks_ties() -> None:
    edges = [("p", "q"), ("x", "y")]
    assert [c.episode_ids for c in select_storylines(edges, [])] == [("p", "q"), ("x", "y")]
    order = {"x": 0, "y": 1, "p": 2, "q": 3}
    assert [c.episode_ids for c in select_storylines(edges, [], node_order=order)] == [("x", "y"), ("p", "q")]


def test_injected_coherence_and_support_change_the_ranking() -> None:
    edges = chain_edges("ABC", "ABD")  # ABC and ABD overlap 2/3 > rho: only one can be chosen
    assert select_storylines(edges, [])[0].episode_ids == tuple("ABC")
    liked = select_storylines(edges, [], coherence=lambda chain: 1.0 if "D" in chain else 0.0)
    assert liked[0].episode_ids == tuple("ABD") and liked[0].coherence == 1.0
    supported = select_storylines(edges, [], edge_support={("B", "C"): 0.2})
    assert supported[0].episode_ids == tuple("ABD") and supported[0].support == pytest.approx(1.0)


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError):
        StorylineSettings(max_chain_length=1, min_chain_length=2)
    with pytest.raises(ValueError):
        StorylineSettings(max_overlap=1.5)


def test_overlap_definition() -> None:
    assert overlap("ABCD", "CDEFGH") == pytest.approx(2 / 4)
    assert overlap("AB", "ABCDEF") == 1.0
    assert overlap("", "AB") == 0.0


def test_document_sized_dag_is_fast() -> None:
    ids = [f"e{i:03d}" for i in range(300)]
    edges = [(ids[i], ids[j]) for i in range(300) for j in range(i + 1, min(300, i + 6)) if (i * 7 + j) % 3]
    start = time.perf_counter()
    chosen = select_storylines(edges, ids)
    assert time.perf_counter() - start < 2.0
    assert 0 < len(chosen) <= 15
    assert_follows_edges(chosen, edges)


# ---------------------------------------------------------------- properties


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[str]]:
    n = draw(st.integers(0, 12))
    nodes = [f"n{i:02d}" for i in range(n)]
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=30, unique=True)) if pairs else []
    return edges, nodes


SMALL = st.builds(
    StorylineSettings,
    max_depth=st.integers(2, 12),
    max_paths=st.integers(1, 60),
    max_chain_length=st.integers(2, 6),
    max_overlap=st.sampled_from([0.0, 0.34, 0.5, 1.0]),
    min_new_episodes=st.integers(1, 3),
    max_storylines=st.integers(1, 6),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=dags(), config=SMALL, data=st.data())
def test_property_selected_chains_obey_algorithm_2(
    graph: tuple[list[tuple[str, str]], list[str]], config: StorylineSettings, data: st.DataObject
) -> None:
    edges, nodes = graph
    chosen = select_storylines(edges, nodes, config)
    assert len(chosen) <= config.max_storylines
    assert_follows_edges(chosen, edges)
    covered: set[str] = set()
    for i, c in enumerate(chosen):
        assert config.min_chain_length <= len(c.episode_ids) <= config.max_chain_length
        assert all(
            overlap(c.episode_ids, earlier.episode_ids) <= config.max_overlap for earlier in chosen[:i]
        )
        assert len(set(c.episode_ids) - covered) >= config.min_new_episodes
        covered |= set(c.episode_ids)
    paths = enumerate_paths(edges, nodes, config)
    assert len(paths) <= config.max_paths
    assert_follows_edges(paths, edges)
    assert all(len(p) <= config.max_depth for p in paths)
    assert all(len(c) <= config.max_chain_length for c in candidate_chains(paths, config))
    shuffled = select_storylines(data.draw(st.permutations(edges)), data.draw(st.permutations(nodes)), config)
    assert shuffled == chosen
