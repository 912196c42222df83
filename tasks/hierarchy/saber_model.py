"""The SABER cleaner's vocabulary (paper appendix A.1): relation types and their weights, the
per-relation statuses and audit actions, the shortcut questions put to an adjudicator, and the
deterministic heuristic adjudicator that answers them when no LLM is configured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

RELATION_TYPES = ("causes", "precedes", "elaborates", "contrasts")
PROGRESSION_TYPES = ("causes", "precedes", "elaborates")
# The authors' published defaults (roytian1992/NarrativeKnowledgeWeaver, core/utils/config.py
# CausalGraphConfig.type_weight): causes 1.0, precedes 0.7, elaborates 0.35; contrasts are
# skipped from the progression graph, so their weight is never used for cleaning.
DEFAULT_TYPE_WEIGHTS: dict[str, float] = {
    "causes": 1.0,
    "precedes": 0.7,
    "elaborates": 0.35,
    "contrasts": 0.0,
}
MODES = ("raw", "heuristic", "saber")
# "removed_duplicate" is ours: the paper's graph holds one edge per ordered pair, so weaker
# parallel relations are dropped before cleaning and counted apart from cycle/shortcut removals.
STATUSES = ("kept", "removed_cycle", "removed_shortcut", "removed_duplicate", "auxiliary")
ACTIONS = (
    "remove_cycle_edge",
    "remove_duplicate",
    "mark_shortcut",
    "adjudicate",
    "remove_shortcut",
    "keep_shortcut",
)
DECISIONS = ("redundant", "necessary", "uncertain")
DEFAULT_MAX_PATH_HOPS = 3  # triangles (2 hops) plus one extra intermediate episode

# Path types that can stand in for a direct edge in the heuristic adjudicator: a chain of
# causes/precedes still orders u before v; elaborates is the loosest link, so any progression
# chain covers it. A direct "causes" is absent on purpose: the heuristic never prunes a causal
# claim (the authors' code likewise protects direct causes edges from automatic pruning).
_COVERED_BY: dict[str, frozenset[str]] = {
    "precedes": frozenset({"causes", "precedes"}),
    "elaborates": frozenset(PROGRESSION_TYPES),
}


@dataclass(frozen=True)
class EpisodeEdge:
    relation_id: str
    source: str
    target: str
    relation_type: str
    confidence: float


@dataclass(frozen=True)
class SaberAction:
    step: int
    action: str
    relation_id: str
    source: str
    target: str
    rule: str
    reason: str
    indirect_path: tuple[str, ...] = ()  # the path that justified a mark/adjudication/removal


@dataclass(frozen=True)
class ShortcutQuestion:
    edge: EpisodeEdge
    indirect_path: tuple[str, ...]  # episode ids u -> x ... -> v
    path_edges: tuple[EpisodeEdge, ...] = ()  # the relations along indirect_path, in order


@dataclass(frozen=True)
class ShortcutVerdict:
    decision: str  # "redundant" | "necessary" | "uncertain"
    reason: str


Adjudicator = Callable[[list[ShortcutQuestion]], list[ShortcutVerdict]]
SupportCheck = Callable[[EpisodeEdge, tuple[str, ...]], bool]


@dataclass
class SaberResult:
    status: dict[str, str]
    actions: list[SaberAction]
    edges: tuple[EpisodeEdge, ...] = field(default=())

    def kept_edges(self) -> list[EpisodeEdge]:
        """The progression edges left in the cleaned graph, ordered by relation_id."""
        return [e for e in self.edges if self.status.get(e.relation_id) == "kept"]

    def counts(self) -> dict[str, int]:
        """Number of relations per status (every status present, zeros included)."""
        values = list(self.status.values())
        return {s: values.count(s) for s in STATUSES}


def effective_weight(edge: EpisodeEdge, type_weights: Mapping[str, float] = DEFAULT_TYPE_WEIGHTS) -> float:
    """s(e) = confidence(e) * w_type(e) for one relation."""
    if edge.relation_type not in type_weights:
        raise ValueError(f"no type weight for relation type {edge.relation_type!r} ({edge.relation_id})")
    return float(edge.confidence) * float(type_weights[edge.relation_type])


def heuristic_adjudicator(
    questions: Sequence[ShortcutQuestion], type_weights: Mapping[str, float] = DEFAULT_TYPE_WEIGHTS
) -> list[ShortcutVerdict]:
    """Deterministic no-LLM stand-in: one verdict per question, redundant only when clearly covered."""
    return [_heuristic_verdict(q, type_weights) for q in questions]


def _heuristic_verdict(q: ShortcutQuestion, type_weights: Mapping[str, float]) -> ShortcutVerdict:
    e, s = q.edge, effective_weight(q.edge, type_weights)
    covering = _COVERED_BY.get(e.relation_type)
    if covering is None:
        return ShortcutVerdict(
            "uncertain", f"heuristic: a direct '{e.relation_type}' claim is never pruned without the LLM"
        )
    if not q.path_edges or len(q.path_edges) != len(q.indirect_path) - 1:
        return ShortcutVerdict("uncertain", "heuristic: the indirect path's relations were not supplied")
    foreign = [p.relation_type for p in q.path_edges if p.relation_type not in covering]
    if foreign:
        return ShortcutVerdict(
            "uncertain",
            f"heuristic: the path has a '{foreign[0]}' link, which does not imply '{e.relation_type}'",
        )
    low = min(effective_weight(p, type_weights) for p in q.path_edges)
    if low < s:
        return ShortcutVerdict(
            "necessary",
            f"heuristic: the weakest path link (s={low:.3f}) is weaker than the direct edge (s={s:.3f})",
        )
    return ShortcutVerdict(
        "redundant", f"heuristic: every path link has s>={s:.3f} and a type that implies '{e.relation_type}'"
    )
