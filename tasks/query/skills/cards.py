"""Post-retrieval reading skills (paper §3.3, appendix A.4): Reading Skill Cards loaded from
`tasks/skills/*.toml`, a selector that picks one to three cards per question, and the short
operators injected into the final-answer prompt.

Cards never retrieve or add evidence; they only say how an assembled packet should be read.
Offline the selector ranks cards by rule matches on the question form and answer format; with an
LLM the model chooses from the catalog and the offline selector is the fallback.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from schemas.responses.query import SkillChoice
from tasks.llm.client.protocol import LLMClient, LLMRequest
from tasks.query.evidence.board import EvidenceBoard
from tasks.query.plan import QueryIntents, decompose

SKILLS_DIR = Path(__file__).resolve().parent
OPTION_ADMISSION = "option_admission"
FALLBACK_SKILL = "literal_slot"
MAX_SKILLS = 3
MAX_OPERATOR_WORDS = 60
MAX_OPERATOR_ZH_CHARS = 160
ANSWER_FORMATS = ("free_text", "multiple_choice")
WH_FORMS = ("why", "how", "who", "when", "where", "which", "what", "yesno", "other")
NEEDS = ("order", "cause", "dialogue", "place", "state", "pair", "literal")
FAMILIES = ("option_admission", "quest_narrative", "mind_state", "theme", "literal")
REQUIRED = (
    "id",
    "name",
    "name_zh",
    "family",
    "seeds",
    "triggers",
    "evidence_rules",
    "failure_modes",
    "operator",
    "operator_zh",
)
TRIGGER_KEYS = ("wh", "patterns", "exclude", "qtypes", "answer_formats", "needs")

# Rule weights: a pattern hit or a benchmark type hint is a strong signal, the wh-form a medium
# one, and the planner's needs only reinforce (alone they never reach the threshold).
WEIGHT_PATTERN = 1.5
WEIGHT_EXTRA_PATTERN = 0.5
WEIGHT_WH = 1.0
WEIGHT_NEED = 0.5
WEIGHT_QTYPE = 2.0
SELECT_THRESHOLD = 1.5
PatternList = tuple[re.Pattern[str], ...]


class SkillCardError(ValueError):
    """A card file that is missing fields, has bad values or duplicates another card's id."""


@dataclass(frozen=True)
class SkillCard:
    id: str
    name: str
    name_zh: str
    family: (
        str  # the paper's reporting group: option_admission | quest_narrative | mind_state | theme | literal
    )
    seeds: str
    wh: tuple[str, ...]
    patterns: PatternList
    exclude: PatternList  # any hit vetoes the card for the question
    qtypes: tuple[str, ...]
    answer_formats: tuple[str, ...]
    needs: tuple[str, ...]
    evidence_rules: tuple[str, ...]
    failure_modes: tuple[str, ...]
    operator: str
    operator_zh: str
    priority: int = 50  # lower wins ties between equally matched cards
    path: str = ""


def _strings(value: Any, field: str, where: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise SkillCardError(f"{where}: '{field}' must be a list of non-empty strings")
    if allowed is not None and (unknown := sorted(set(value) - set(allowed))):
        raise SkillCardError(f"{where}: '{field}' has unknown values {unknown}; allowed {list(allowed)}")
    return tuple(v.strip() for v in value)


def _text(value: Any, field: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SkillCardError(f"{where}: '{field}' must be a non-empty string")
    return " ".join(value.split())


def _patterns(value: Any, field: str, where: str) -> PatternList:
    compiled = []
    for source in _strings(value, field, where):
        try:
            compiled.append(re.compile(source, re.IGNORECASE))
        except re.error as exc:
            raise SkillCardError(f"{where}: {field} pattern {source!r} does not compile: {exc}") from None
    return tuple(compiled)


def parse_card(data: dict[str, Any], where: str) -> SkillCard:
    """One validated card from the parsed TOML of `where` (a file name used in error messages)."""
    triggers = data.get("triggers")
    if not isinstance(triggers, dict):
        raise SkillCardError(f"{where}: 'triggers' must be a table")
    # Checked first: a key written after the [triggers] header lands in that table, not at the top.
    if unknown := sorted(set(triggers) - set(TRIGGER_KEYS)):
        raise SkillCardError(f"{where}: unknown trigger keys {unknown}; allowed {list(TRIGGER_KEYS)}")
    if missing := [f for f in REQUIRED if f not in data]:
        raise SkillCardError(f"{where}: missing required fields {missing}")
    if unknown := sorted(set(data) - set(REQUIRED) - {"priority"}):
        raise SkillCardError(f"{where}: unknown fields {unknown}")
    patterns, exclude = (
        _patterns(triggers.get(key, []), f"triggers.{key}", where) for key in ("patterns", "exclude")
    )
    card_id = _text(data["id"], "id", where)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", card_id):
        raise SkillCardError(f"{where}: id {card_id!r} must be snake_case")
    family = _text(data["family"], "family", where)
    if family not in FAMILIES:
        raise SkillCardError(f"{where}: family {family!r} not in {list(FAMILIES)}")
    operator = _text(data["operator"], "operator", where)
    if len(operator.split()) > MAX_OPERATOR_WORDS:
        raise SkillCardError(
            f"{where}: operator has {len(operator.split())} words, at most {MAX_OPERATOR_WORDS}"
        )
    operator_zh = _text(data["operator_zh"], "operator_zh", where)
    if len(operator_zh) > MAX_OPERATOR_ZH_CHARS:
        raise SkillCardError(
            f"{where}: operator_zh has {len(operator_zh)} characters, at most {MAX_OPERATOR_ZH_CHARS}"
        )
    priority = data.get("priority", 50)
    if not isinstance(priority, int):
        raise SkillCardError(f"{where}: 'priority' must be an integer")
    rules = _strings(data["evidence_rules"], "evidence_rules", where)
    failures = _strings(data["failure_modes"], "failure_modes", where)
    if not rules or not failures:
        raise SkillCardError(f"{where}: 'evidence_rules' and 'failure_modes' must not be empty")
    return SkillCard(
        id=card_id,
        name=_text(data["name"], "name", where),
        name_zh=_text(data["name_zh"], "name_zh", where),
        family=family,
        seeds=_text(data["seeds"], "seeds", where),
        wh=_strings(triggers.get("wh", []), "triggers.wh", where, WH_FORMS),
        patterns=patterns,
        exclude=exclude,
        qtypes=_strings(triggers.get("qtypes", []), "triggers.qtypes", where),
        answer_formats=_strings(
            triggers.get("answer_formats", list(ANSWER_FORMATS)),
            "triggers.answer_formats",
            where,
            ANSWER_FORMATS,
        ),
        needs=_strings(triggers.get("needs", []), "triggers.needs", where, NEEDS),
        evidence_rules=rules,
        failure_modes=failures,
        operator=operator,
        operator_zh=operator_zh,
        priority=priority,
        path=where,
    )


def _load(folder: Path) -> dict[str, SkillCard]:
    files = sorted(folder.glob("*.toml"))
    if not files:
        raise SkillCardError(f"no skill cards (*.toml) in {folder.name}/")
    cards: dict[str, SkillCard] = {}
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise SkillCardError(f"{path.name}: not valid TOML: {exc}") from None
        card = parse_card(data, path.name)
        if card.id in cards:
            raise SkillCardError(f"{path.name}: id {card.id!r} already used by {cards[card.id].path}")
        cards[card.id] = card
    for required in (OPTION_ADMISSION, FALLBACK_SKILL):
        if required not in cards:
            raise SkillCardError(f"the catalog in {folder.name}/ lacks the required card {required!r}")
    return cards


@lru_cache(maxsize=8)
def _load_cached(folder: str) -> dict[str, SkillCard]:
    return _load(Path(folder))


def load_cards(folder: Path | None = None) -> dict[str, SkillCard]:
    """Every card of the catalog by id (cached per folder); raises SkillCardError naming a broken file."""
    return dict(_load_cached(str((folder or SKILLS_DIR).resolve())))


# -- selection ------------------------------------------------------------------------------


class _TextOnlyEnv:
    """Stands in for a ToolEnv without a graph, so decomposition reads the question text alone."""

    class store:  # noqa: N801 - mirrors the attribute ToolEnv exposes
        has_graph = False


def _form_of(question: str, options: list[str] | None, intents: QueryIntents | None) -> tuple[str, set[str]]:
    if intents is None:
        intents = decompose(_TextOnlyEnv(), question, options)  # type: ignore[arg-type]
    return intents.form.wh, set(intents.needs)


def score_card(
    card: SkillCard, question: str, wh: str, needs: set[str], answer_format: str, qtype: str | None = None
) -> float:
    """How strongly the question's surface form calls for `card` (0 when the format rules it out)."""
    if answer_format not in card.answer_formats or any(p.search(question) for p in card.exclude):
        return 0.0
    hits = sum(1 for pattern in card.patterns if pattern.search(question))
    score = (WEIGHT_PATTERN + WEIGHT_EXTRA_PATTERN * min(hits - 1, 2)) if hits else 0.0
    score += WEIGHT_WH if wh in card.wh else 0.0
    score += WEIGHT_NEED * len(needs & set(card.needs))
    if qtype and qtype.strip().lower() in {q.lower() for q in card.qtypes}:
        score += WEIGHT_QTYPE
    return round(score, 6)


def select_skills_offline(
    question: str,
    options: list[str] | None,
    intents: QueryIntents | None = None,
    board: EvidenceBoard | None = None,
    qtype: str | None = None,
    cards: dict[str, SkillCard] | None = None,
) -> list[str]:
    """One to three card ids by rules on question form and answer format (MCQ always admits options)."""
    catalog = cards or load_cards()
    wh, needs = _form_of(question, options, intents)
    answer_format = "multiple_choice" if options else "free_text"
    chosen = [OPTION_ADMISSION] if options else []
    ranked = []
    for card in catalog.values():
        if card.id in chosen:
            continue
        score = score_card(card, question, wh, needs, answer_format, qtype)
        if score >= SELECT_THRESHOLD:
            ranked.append((-score, card.priority, card.id))
    chosen.extend(card_id for _, _, card_id in sorted(ranked))
    # `board` is accepted for the selector interface but not consulted offline: the packet's
    # composition says little about which reading operation the question needs.
    return chosen[:MAX_SKILLS] or [FALLBACK_SKILL]


def render_operators(
    card_ids: list[str], language: str = "en", cards: dict[str, SkillCard] | None = None
) -> str:
    """The block injected into the final-answer prompt: one line per selected card ('' for none)."""
    catalog = cards or load_cards()
    picked = [catalog[c] for c in card_ids if c in catalog]
    if not picked:
        return ""
    if language == "zh":
        lines = ["阅读技能（仅指导如何阅读证据；每个结论仍须以所引证据为依据）："]
        lines += [f"- {card.name_zh}：{card.operator_zh}" for card in picked]
    else:
        lines = [
            "Reading skills (advisory: they say how to read the evidence; "
            "every claim must still rest on cited evidence):"
        ]
        lines += [f"- {card.name}: {card.operator}" for card in picked]
    return "\n".join(lines)


def catalog_text(language: str = "en", cards: dict[str, SkillCard] | None = None) -> str:
    """The catalog as the selector prompt lists it: id, name and operator per card."""
    catalog = cards or load_cards()
    if language == "zh":
        return "\n".join(f"- {c.id}（{c.name_zh}）：{c.operator_zh}" for c in catalog.values())
    return "\n".join(f"- {c.id} ({c.name}): {c.operator}" for c in catalog.values())


def select_skills_llm(
    client: LLMClient,
    request_factory: Callable[[str, dict[str, Any]], LLMRequest],
    question: str,
    options: list[str] | None,
    evidence_sketch: str,
    intents: QueryIntents | None = None,
    language: str = "en",
    cards: dict[str, SkillCard] | None = None,
) -> list[str]:
    """The LLM's choice of one to three catalog cards; the offline selector when the call fails."""
    catalog = cards or load_cards()
    values = {
        "question": question,
        "answer_format": "multiple_choice" if options else "free_text",
        "options": "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(options)) if options else "(none)",
        "evidence_sketch": evidence_sketch.strip() or "(empty)",
        "catalog": catalog_text(language, catalog),
    }
    result = client.structured(request_factory("select_skills/v1", values), SkillChoice)
    reply = result.value
    picked = [s for s in (reply.skill_ids if reply is not None else []) if s in catalog]
    if not picked:
        return select_skills_offline(question, options, intents, None, cards=catalog)
    if options and OPTION_ADMISSION not in picked:
        # Required for the answer format: retained even when the model leaves it out.
        picked = [OPTION_ADMISSION, *picked]
    return picked[:MAX_SKILLS]
