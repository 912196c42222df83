"""Trunk–branch storyline segmentation (paper appendix A.1, Algorithm 2) as pure functions.

Bounded path enumeration over the cleaned episode graph, a trie over those paths, candidate
chains from shared trunks / branch continuations / terminal paths, splitting at length L, and a
greedy, overlap-limited selection. Storyline naming (the LLM part) happens elsewhere.

overlap(P, Q) = |P ∩ Q| / min(|P|, |Q|): the share of the shorter chain already told by the
other, so a short side arc inside a long arc counts as fully overlapping.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

Path = tuple[str, ...]
Edge = tuple[str, str]


@dataclass(frozen=True)
class StorylineSettings:
    max_depth: int = 12  # episodes per enumerated path before it is cut (and resumed)
    max_paths: int = 2000  # enumerated paths in total
    max_chain_length: int = 8  # L
    max_overlap: float = 0.5  # rho
    min_new_episodes: int = 2  # m
    max_storylines: int = 15
    min_chain_length: int = 2
    # Ranking weights; every term is in [0, 1] (coverage is normalised by the longest candidate).
    coverage_weight: float = 0.4
    coherence_weight: float = 0.2
    support_weight: float = 0.1
    novelty_weight: float = 0.3

    def __post_init__(self) -> None:
        if self.max_depth < 1 or self.max_paths < 1 or self.max_storylines < 0:
            raise ValueError("max_depth and max_paths must be >= 1, max_storylines >= 0")
        if not 1 <= self.min_chain_length <= self.max_chain_length:
            raise ValueError("need 1 <= min_chain_length <= max_chain_length")
        if not 0.0 <= self.max_overlap <= 1.0 or self.min_new_episodes < 0:
            raise ValueError("max_overlap must be in [0, 1] and min_new_episodes >= 0")


@dataclass(frozen=True)
class Chain:
    episode_ids: Path
    origin: str  # "trunk" | "branch" | "terminal" | "split"
    score: float  # ranking score when selected
    coverage: float  # |P| / |all episodes|
    coherence: float
    support: float  # mean edge support along the chain
    novelty: float  # share of P not covered by chains selected before it


def _node_key(node_order: Mapping[str, int] | None) -> Callable[[str], tuple[int, int, str]]:
    """Sort key: episodes with a known order first, by that order, then by id."""
    order = node_order or {}
    return lambda n: (0, order[n], n) if n in order else (1, 0, n)


def _dfs(root: str, succ: Mapping[str, list[str]], max_depth: int) -> Iterator[tuple[Path, bool]]:
    """Simple paths from root in id order, as (path, was_cut_at_max_depth)."""
    stack: list[Path] = [(root,)]
    while stack:
        path = stack.pop()
        nexts = [n for n in succ[path[-1]] if n not in path]
        if nexts and len(path) < max_depth:
            stack.extend(path + (n,) for n in reversed(nexts))
        else:
            yield path, bool(nexts)


def enumerate_paths(
    dag_edges: Sequence[Edge],
    nodes: Sequence[str],
    settings: StorylineSettings = StorylineSettings(),
    node_order: Mapping[str, int] | None = None,
) -> list[Path]:
    """Bounded, deterministic source-to-sink simple paths; an isolated episode is a 1-episode path.

    Works on cyclic graphs too (the ablation's raw setting): roots are the first episode of each
    source SCC and paths never revisit an episode. A path reaching max_depth is cut and the
    enumeration resumes from its last episode. Roots are served round-robin so one bushy source
    cannot spend the whole max_paths budget at the start of the document, and a quarter of the
    budget (at most one path per episode) is kept to start a path at any episode still uncovered.
    """
    key = _node_key(node_order)
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((a, b) for a, b in dag_edges if a != b)
    succ = {n: sorted(graph.successors(n), key=key) for n in graph}
    cond = nx.condensation(graph)
    first = {c: min(cond.nodes[c]["members"], key=key) for c in cond}
    roots = sorted((first[c] for c in cond if cond.in_degree(c) == 0), key=key)
    reserve = min(len(graph), settings.max_paths // 4)
    paths: list[Path] = []
    queued = set(roots)
    active = deque((r, _dfs(r, succ, settings.max_depth)) for r in roots)
    while active and len(paths) < settings.max_paths - reserve:
        root, paths_from_root = active.popleft()
        item = next(paths_from_root, None)
        if item is None:
            continue
        path, was_cut = item
        paths.append(path)
        if was_cut and path[-1] not in queued:
            queued.add(path[-1])
            active.append((path[-1], _dfs(path[-1], succ, settings.max_depth)))
        active.append((root, paths_from_root))
    covered = {n for p in paths for n in p}
    topo = [
        n
        for c in nx.lexicographical_topological_sort(cond, key=lambda c: key(first[c]))
        for n in sorted(cond.nodes[c]["members"], key=key)
    ]
    for n in topo:  # coverage top-up, earliest uncovered episode first, preferring uncovered successors
        if n in covered or len(paths) >= settings.max_paths:
            continue
        path = (n,)
        while len(path) < settings.max_depth:
            nexts = [m for m in succ[path[-1]] if m not in path]
            if not nexts:
                break
            path += (min(nexts, key=lambda m: (m in covered, key(m))),)
        paths.append(path)
        covered.update(path)
    return paths


class _TrieNode:
    __slots__ = ("children", "count", "ends")

    def __init__(self) -> None:
        self.children: dict[str, _TrieNode] = {}
        self.count = 0  # paths passing through this node
        self.ends = 0  # paths ending here


class Trie:
    """Prefix tree over episode-id paths; children keep insertion order, so output is deterministic."""

    def __init__(self, paths: Sequence[Path] = ()) -> None:
        self._root = _TrieNode()
        for p in paths:
            self.insert(p)

    def insert(self, path: Sequence[str]) -> None:
        """Add one path (a sequence of episode ids)."""
        node = self._root
        for episode in path:
            node = node.children.setdefault(episode, _TrieNode())
            node.count += 1
        if path:
            node.ends += 1

    @staticmethod
    def _is_branch(node: _TrieNode) -> bool:
        # Paths diverge here, or one path stops here while another goes on.
        return len(node.children) >= 2 or (node.ends > 0 and bool(node.children))

    def _segments(self) -> Iterator[tuple[Path, bool, bool]]:
        """(segment, starts_at_branch, ends_at_branch) between consecutive branch points / root / leaf."""
        stack: list[tuple[_TrieNode, Path, int, bool]] = [(self._root, (), 0, False)]
        while stack:
            node, prefix, cut, from_branch = stack.pop()
            branch = node is not self._root and self._is_branch(node)
            if node is not self._root and (branch or not node.children):
                yield prefix[cut:], from_branch, branch
            if branch:  # continuations restart at this node, so chains stay connected
                cut, from_branch = len(prefix) - 1, True
            for episode, child in reversed(list(node.children.items())):
                stack.append((child, prefix + (episode,), cut, from_branch))

    def trunks(self) -> list[Path]:
        """Shared segments: from the root or previous branch point up to a branch point (>= 2 paths)."""
        return [s for s, _, ends in self._segments() if ends and len(s) >= 2]

    def branches(self) -> list[Path]:
        """Continuations: from a branch point (included) to the next branch point or leaf."""
        return [s for s, starts, _ in self._segments() if starts and len(s) >= 2]

    def terminals(self) -> list[Path]:
        """Complete inserted root-to-leaf paths."""
        out: list[Path] = []
        stack: list[tuple[_TrieNode, Path]] = [(self._root, ())]
        while stack:
            node, prefix = stack.pop()
            if node.ends:
                out.append(prefix)
            stack.extend((c, prefix + (e,)) for e, c in reversed(list(node.children.items())))
        return out


def _split(
    chain: Path,
    settings: StorylineSettings,
    is_branch_cut: Callable[[str, str], bool],
    support: Callable[[str, str], float],
) -> list[Path]:
    """Cut chains longer than L at an edge: branch points first, then the lowest support, then the middle."""
    if len(chain) <= settings.max_chain_length:
        return [chain]
    n, lo = len(chain), settings.min_chain_length
    cuts = [k for k in range(n - 1) if k + 1 >= lo and n - k - 1 >= lo] or list(range(n - 1))
    mid = (n - 2) / 2
    k = min(
        cuts,
        key=lambda k: (
            not is_branch_cut(chain[k], chain[k + 1]),
            support(chain[k], chain[k + 1]),
            abs(k - mid),
            k,
        ),
    )
    return _split(chain[: k + 1], settings, is_branch_cut, support) + _split(
        chain[k + 1 :], settings, is_branch_cut, support
    )


def _support_fn(edge_support: Mapping[Edge, float] | None) -> Callable[[str, str], float]:
    return (lambda a, b: float(edge_support.get((a, b), 1.0))) if edge_support else (lambda a, b: 1.0)


def _candidates(
    paths: Sequence[Path], settings: StorylineSettings, edge_support: Mapping[Edge, float] | None
) -> list[tuple[Path, str]]:
    """(chain, origin) pairs, deduplicated (first origin wins: trunk, branch, terminal)."""
    trie = Trie(paths)
    out_deg: dict[str, set[str]] = defaultdict(set)
    in_deg: dict[str, set[str]] = defaultdict(set)
    for p in paths:
        for a, b in zip(p, p[1:]):
            out_deg[a].add(b)
            in_deg[b].add(a)

    def is_branch_cut(a: str, b: str) -> bool:  # the arc diverges after a or merges into b
        return len(out_deg[a]) >= 2 or len(in_deg[b]) >= 2

    support = _support_fn(edge_support)
    found: dict[Path, str] = {}
    for origin, chains in (
        ("trunk", trie.trunks()),
        ("branch", trie.branches()),
        ("terminal", trie.terminals()),
    ):
        for chain in chains:
            pieces = _split(chain, settings, is_branch_cut, support)
            for piece in pieces:
                if len(piece) >= settings.min_chain_length:
                    found.setdefault(piece, origin if len(pieces) == 1 else "split")
    return list(found.items())


def candidate_chains(
    paths: Sequence[Path],
    settings: StorylineSettings = StorylineSettings(),
    edge_support: Mapping[Edge, float] | None = None,
) -> list[Path]:
    """Candidate storyline chains (each at most L episodes) from trunks, branches and terminal paths."""
    return [chain for chain, _ in _candidates(paths, settings, edge_support)]


def overlap(p: Sequence[str], q: Sequence[str]) -> float:
    """|P ∩ Q| / min(|P|, |Q|) over episode sets (0 when either is empty)."""
    a, b = set(p), set(q)
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


@dataclass
class _Candidate:
    chain: Path
    origin: str
    members: frozenset[str]
    coherence: float
    support: float
    tie: tuple[tuple[int, int, str], ...]


def select_storylines(
    dag_edges: Sequence[Edge],
    nodes: Sequence[str],
    settings: StorylineSettings = StorylineSettings(),
    edge_support: Mapping[Edge, float] | None = None,
    node_order: Mapping[str, int] | None = None,
    coherence: Callable[[Path], float] | None = None,
) -> list[Chain]:
    """Greedy storyline chains for one episode graph, in selection order (Algorithm 2 lines 1-11)."""
    all_nodes = set(nodes) | {n for e in dag_edges for n in e}
    if not all_nodes or settings.max_storylines == 0:
        return []
    key = _node_key(node_order)
    paths = enumerate_paths(dag_edges, sorted(all_nodes, key=key), settings, node_order)
    support = _support_fn(edge_support)

    def mean_support(chain: Path) -> float:
        return (
            sum(support(a, b) for a, b in zip(chain, chain[1:])) / (len(chain) - 1) if len(chain) > 1 else 1.0
        )

    judge = coherence or mean_support
    pool = [
        _Candidate(c, o, frozenset(c), float(judge(c)), mean_support(c), tuple(key(n) for n in c))
        for c, o in _candidates(paths, settings, edge_support)
    ]
    pool = [c for c in pool if len(c.members) >= settings.min_new_episodes]
    longest = max((len(c.chain) for c in pool), default=1)
    selected: list[Chain] = []
    covered: set[str] = set()
    while pool and len(selected) < settings.max_storylines:
        # Novelty changes as chains are accepted, so the ranking is recomputed each round.
        ranked = []
        for c in pool:
            novelty = len(c.members - covered) / len(c.chain)
            score = (
                settings.coverage_weight * len(c.chain) / longest
                + settings.coherence_weight * c.coherence
                + settings.support_weight * c.support
                + settings.novelty_weight * novelty
            )
            ranked.append((-round(score, 12), c.tie, c, novelty, score))
        _, _, best, novelty, score = min(ranked, key=lambda r: (r[0], r[1]))
        selected.append(
            Chain(
                best.chain,
                best.origin,
                score,
                len(best.chain) / len(all_nodes),
                best.coherence,
                best.support,
                novelty,
            )
        )
        covered |= best.members
        # A rejected candidate can never become acceptable later (overlap only grows, novelty
        # only shrinks), so filtering against the newest chain keeps the pool exact.
        pool = [
            c
            for c in pool
            if c is not best
            and overlap(c.chain, best.chain) <= settings.max_overlap
            and len(c.members - covered) >= settings.min_new_episodes
        ]
    return selected
