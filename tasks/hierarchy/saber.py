"""SABER episode-graph cleaning (paper appendix A.1, Algorithm 1) as pure functions.

Input: typed, scored episode relations. Output: one status per relation plus an ordered audit
log of every decision. The LLM adjudicator is an injected callable; without one a deterministic
heuristic stands in (tasks.hierarchy.saber_model, with the types). Modes mirror the appendix
B.9 ablation: "raw", "heuristic", "saber".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import partial

import networkx as nx

from tasks.hierarchy.saber_model import (
    DECISIONS,
    DEFAULT_MAX_PATH_HOPS,
    DEFAULT_TYPE_WEIGHTS,
    MODES,
    RELATION_TYPES,
    Adjudicator,
    EpisodeEdge,
    SaberAction,
    SaberResult,
    ShortcutQuestion,
    SupportCheck,
    effective_weight,
    heuristic_adjudicator,
)


def clean_episode_graph(
    edges: Sequence[EpisodeEdge],
    mode: str = "saber",
    type_weights: Mapping[str, float] = DEFAULT_TYPE_WEIGHTS,
    adjudicate: Adjudicator | None = None,
    support_preserved: SupportCheck | None = None,
    max_adjudications: int = 200,
    max_path_hops: int = DEFAULT_MAX_PATH_HOPS,
) -> SaberResult:
    """Clean one document's episode relations into an acyclic progression graph (per relation status)."""
    if mode not in MODES:
        raise ValueError(f"unknown SABER mode {mode!r}; expected one of {MODES}")
    if max_path_hops < 2:
        raise ValueError("max_path_hops must be >= 2 (an indirect path has at least two hops)")
    ordered = _validated(edges, type_weights)
    status = {e.relation_id: "auxiliary" for e in ordered if e.relation_type == "contrasts"}
    progression = [e for e in ordered if e.relation_type != "contrasts"]
    if mode == "raw":  # the ablation baseline: the uncleaned graph, cycles and all
        status.update((e.relation_id, "kept") for e in progression)
        return SaberResult(status=dict(sorted(status.items())), actions=[], edges=ordered)

    log = _Log()
    weight = {e.relation_id: effective_weight(e, type_weights) for e in progression}
    graph = _collapse(progression, weight, status, log)
    marked = _mark_triangles(graph, weight, log) if mode == "saber" else set()
    _break_cycles(graph, weight, marked, status, log)
    if mode == "saber":
        judge = (
            adjudicate
            if adjudicate is not None
            else partial(heuristic_adjudicator, type_weights=type_weights)
        )
        _prune_shortcuts(
            graph, weight, status, log, judge, support_preserved, max_adjudications, max_path_hops
        )
    for e in progression:
        status.setdefault(e.relation_id, "kept")
    return SaberResult(status=dict(sorted(status.items())), actions=log.actions, edges=ordered)


class _Log:
    """Numbers actions in the order they are taken."""

    def __init__(self) -> None:
        self.actions: list[SaberAction] = []

    def add(self, action: str, e: EpisodeEdge, rule: str, reason: str, path: tuple[str, ...] = ()) -> None:
        self.actions.append(
            SaberAction(len(self.actions) + 1, action, e.relation_id, e.source, e.target, rule, reason, path)
        )


def _validated(edges: Iterable[EpisodeEdge], type_weights: Mapping[str, float]) -> tuple[EpisodeEdge, ...]:
    """Edges sorted by relation_id (so input order never matters), after sanity checks."""
    ordered = tuple(sorted(edges, key=lambda e: e.relation_id))
    for prev, cur in zip(ordered, ordered[1:]):
        if prev.relation_id == cur.relation_id:
            raise ValueError(f"duplicate relation_id {cur.relation_id!r}")
    for e in ordered:
        if e.relation_type not in RELATION_TYPES:
            raise ValueError(f"unknown relation type {e.relation_type!r} ({e.relation_id})")
        if e.relation_type != "contrasts" and e.relation_type not in type_weights:
            raise ValueError(f"no type weight for {e.relation_type!r}")
        if not math.isfinite(float(e.confidence)):
            raise ValueError(f"confidence of {e.relation_id} is not finite")
    return ordered


def _s(weight: Mapping[str, float], e: EpisodeEdge) -> str:
    return f"{e.relation_id} ({e.source}->{e.target}, {e.relation_type}, s={weight[e.relation_id]:.3f})"


def _collapse(
    progression: list[EpisodeEdge], weight: dict[str, float], status: dict[str, str], log: _Log
) -> nx.DiGraph:
    """One edge per ordered pair: self-loops are cycle edges, weaker parallels are duplicates."""
    best: dict[tuple[str, str], EpisodeEdge] = {}
    for e in progression:
        if e.source == e.target:
            status[e.relation_id] = "removed_cycle"
            log.add(
                "remove_cycle_edge",
                e,
                "self_loop",
                f"Removed {_s(weight, e)}: an episode cannot precede or cause itself.",
            )
            continue
        pair = (e.source, e.target)
        if (
            pair not in best or weight[e.relation_id] > weight[best[pair].relation_id]
        ):  # ties: lowest id (seen first)
            best[pair] = e
    graph = nx.DiGraph()
    for e in progression:
        keep = best.get((e.source, e.target))
        if keep is None:
            continue
        if keep is e:
            graph.add_edge(e.source, e.target, edge=e)
        else:
            status[e.relation_id] = "removed_duplicate"
            log.add(
                "remove_duplicate",
                e,
                "duplicate_pair",
                f"Removed {_s(weight, e)}: {keep.relation_id} links the same ordered pair "
                f"with s={weight[keep.relation_id]:.3f}.",
            )
    return graph


def _edges_by_id(graph: nx.DiGraph) -> list[EpisodeEdge]:
    return sorted((d["edge"] for _, _, d in graph.edges(data=True)), key=lambda e: e.relation_id)


def _pair_weight(graph: nx.DiGraph, weight: Mapping[str, float], a: str, b: str) -> float:
    return weight[graph[a][b]["edge"].relation_id]


def _mark_triangles(graph: nx.DiGraph, weight: dict[str, float], log: _Log) -> set[str]:
    """Algorithm 1 line 2: direct edges u->v that also have a two-step path u->x->v."""
    marked: set[str] = set()
    for e in _edges_by_id(graph):
        u, v = e.source, e.target
        middles = (set(graph.successors(u)) & set(graph.predecessors(v))) - {u, v}
        if not middles:
            continue
        # Name the strongest detour (highest weakest link) so the audit shows the best evidence.
        x = min(
            middles,
            key=lambda m: (-min(_pair_weight(graph, weight, u, m), _pair_weight(graph, weight, m, v)), m),
        )
        marked.add(e.relation_id)
        log.add(
            "mark_shortcut",
            e,
            "triangle_candidate",
            f"Marked {_s(weight, e)} as a shortcut candidate: {u} -> {x} -> {v} also connects them.",
            (u, x, v),
        )
    return marked


def _reach(
    succ: Mapping[str, Iterable[str]], start: str, allowed: set[str], goal: str | None = None
) -> set[str]:
    """Nodes reachable from start (inclusive) inside `allowed`; stops early once `goal` is seen."""
    seen, stack = {start}, [start]
    while stack:
        for nxt in succ[stack.pop()]:
            if nxt in allowed and nxt not in seen:
                if nxt == goal:
                    return seen | {nxt}
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _break_cycles(
    graph: nx.DiGraph, weight: dict[str, float], marked: set[str], status: dict[str, str], log: _Log
) -> None:
    """Algorithm 1 lines 3-7: drop the weakest edge inside a cyclic SCC until none is left.

    Implemented as one pass over the cyclic edges in (unmarked, s, relation_id) order, removing
    an edge when it still lies on a cycle. That is exactly the per-SCC loop: the globally weakest
    cyclic edge is the weakest edge of its own SCC, SCCs evolve independently, and an edge off
    every cycle never rejoins one (we only remove). It avoids recomputing SCCs after each of
    hundreds of removals.
    """
    comp_of: dict[str, int] = {}
    members: list[set[str]] = []
    for i, comp in enumerate(nx.strongly_connected_components(graph)):
        members.append(set(comp))
        comp_of.update((n, i) for n in comp)
    succ = {n: set(graph.successors(n)) for n in graph}
    pred = {n: set(graph.predecessors(n)) for n in graph}
    cyclic = [d["edge"] for u, v, d in graph.edges(data=True) if comp_of[u] == comp_of[v]]
    cyclic.sort(key=lambda e: (e.relation_id not in marked, weight[e.relation_id], e.relation_id))
    for e in cyclic:
        u, v = e.source, e.target
        allowed = members[comp_of[u]]
        if u not in _reach(succ, v, allowed, goal=u):
            continue  # an earlier removal already broke every cycle through this edge
        scc_size = len(_reach(succ, u, allowed) & _reach(pred, u, allowed))
        graph.remove_edge(u, v)
        succ[u].discard(v)
        pred[v].discard(u)
        status[e.relation_id] = "removed_cycle"
        shortcut = e.relation_id in marked
        why = "the weakest marked shortcut candidate" if shortcut else "the weakest edge"
        log.add(
            "remove_cycle_edge",
            e,
            "scc_min_weight_shortcut" if shortcut else "scc_min_weight",
            f"Removed {_s(weight, e)} as {why} inside a strongly connected component of {scc_size} episodes.",
        )


def _best_indirect_path(
    graph: nx.DiGraph,
    weight: Mapping[str, float],
    reach: Mapping[str, int],
    bit: Mapping[str, int],
    u: str,
    v: str,
    max_hops: int,
) -> tuple[str, ...] | None:
    """The strongest (highest weakest link, then fewest hops, then ids) u~>v path of 2..max_hops hops."""
    target = bit[v]
    if not any(reach[x] & target for x in graph.successors(u) if x != v):
        return None  # v is not reachable except through the direct edge
    best: tuple[float, int, tuple[str, ...]] | None = None
    stack: list[tuple[tuple[str, ...], float]] = [((u,), math.inf)]
    while stack:  # bounded DFS, pruned to nodes that can still reach v
        path, low = stack.pop()
        for nxt in sorted(graph.successors(path[-1])):
            if path[-1] == u and nxt == v:
                continue  # the direct edge itself
            strength = min(low, _pair_weight(graph, weight, path[-1], nxt))
            if nxt == v:
                cand = (-strength, len(path), path + (v,))
                best = cand if best is None or cand < best else best
            elif len(path) < max_hops and reach[nxt] & target:
                stack.append((path + (nxt,), strength))
    return None if best is None else best[2]


def _shortcut_questions(
    graph: nx.DiGraph, weight: Mapping[str, float], max_hops: int
) -> list[ShortcutQuestion]:
    """Algorithm 1 line 8: direct DAG edges that still have an indirect path, weakest first."""
    bit = {n: 1 << i for i, n in enumerate(sorted(graph.nodes))}
    reach: dict[str, int] = {}
    for n in reversed(list(nx.topological_sort(graph))):  # transitive closure as bitsets, sinks first
        mask = 0
        for s in graph.successors(n):
            mask |= bit[s] | reach[s]
        reach[n] = mask
    questions = []
    for e in sorted(_edges_by_id(graph), key=lambda e: (weight[e.relation_id], e.relation_id)):
        path = _best_indirect_path(graph, weight, reach, bit, e.source, e.target, max_hops)
        if path is not None:
            hops = tuple(graph[a][b]["edge"] for a, b in zip(path, path[1:]))
            questions.append(ShortcutQuestion(edge=e, indirect_path=path, path_edges=hops))
    return questions


def _checked_verdicts(raw: object, n: int) -> list[tuple[str, str]]:
    """(decision, reason) per question; anything malformed becomes an explained "uncertain"."""
    try:
        items = list(raw)  # type: ignore[call-overload]
    except TypeError:
        return [
            (
                "uncertain",
                f"invalid adjudicator output ({type(raw).__name__}, not a list); treated as uncertain",
            )
        ] * n
    if len(items) != n:
        return [
            (
                "uncertain",
                f"adjudicator returned {len(items)} verdicts for {n} questions; all treated as uncertain",
            )
        ] * n
    out = []
    for item in items:
        decision, reason = getattr(item, "decision", None), getattr(item, "reason", "")
        if not isinstance(decision, str) or decision.strip().lower() not in DECISIONS:
            out.append(("uncertain", f"invalid verdict {item!r:.120}; treated as uncertain"))
        else:
            out.append((decision.strip().lower(), str(reason)))
    return out


def _prune_shortcuts(
    graph: nx.DiGraph,
    weight: dict[str, float],
    status: dict[str, str],
    log: _Log,
    adjudicate: Adjudicator,
    support_preserved: SupportCheck | None,
    max_adjudications: int,
    max_hops: int,
) -> None:
    """Algorithm 1 lines 8-14: adjudicate ambiguous shortcuts on the DAG, remove the redundant ones."""
    questions = _shortcut_questions(graph, weight, max_hops)
    asked, skipped = questions[: max(0, max_adjudications)], questions[max(0, max_adjudications) :]
    verdicts = _checked_verdicts(adjudicate(list(asked)), len(asked)) if asked else []
    used: set[tuple[str, str]] = set()  # edges on paths that justified a removal: never removed later
    for q, (decision, reason) in zip(asked, verdicts):
        e, path = q.edge, q.indirect_path
        route = " -> ".join(path)
        log.add(
            "adjudicate",
            e,
            f"llm_{decision}",
            f"Judged {_s(weight, e)} {decision} against {route}: {reason}",
            path,
        )
        if decision != "redundant":
            log.add(
                "keep_shortcut",
                e,
                f"llm_{decision}",
                f"Kept {e.relation_id}: the adjudicator said {decision}.",
                path,
            )
            continue
        hops = list(zip(path, path[1:]))
        if (e.source, e.target) in used:
            why = "it lies on the indirect path that justified an earlier removal"
        elif not all(graph.has_edge(a, b) for a, b in hops):
            why = f"{route} no longer exists after earlier removals"
        elif support_preserved is not None and not support_preserved(e, path):
            why = "the source-support check failed"
        else:
            graph.remove_edge(e.source, e.target)
            used.update(hops)
            status[e.relation_id] = "removed_shortcut"
            log.add(
                "remove_shortcut", e, "llm_redundant", f"Removed {_s(weight, e)}: covered by {route}.", path
            )
            continue
        log.add(
            "keep_shortcut",
            e,
            "support_not_preserved",
            f"Kept {e.relation_id} although judged redundant: {why}.",
            path,
        )
    for q in skipped:
        log.add(
            "keep_shortcut",
            q.edge,
            "budget_exhausted",
            f"Kept {q.edge.relation_id} unjudged: over the max_adjudications={max_adjudications} budget.",
            q.indirect_path,
        )
