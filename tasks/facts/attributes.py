"""An entity's compact attribute dictionary (age, role, occupation, affiliation, goal,
possession, relationship-to-X, ...) derived from its facts, its name and the relations
table, each value with its supporting fact ids; and a deterministic profile summary."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Any

import pandas as pd

from tasks.facts.relation_index import RelationIndex
from tasks.narrative.inputs import NarrativeInputs, join_names

OCCUPATIONS_EN = frozenset(
    """
keeper master fisherman fishermen developer assistant
volunteer doctor nurse lawyer police policeman officer teacher
priest manager skipper captain soldier king queen prince princess farmer merchant smith blacksmith miller
charcoal-burner woodcutter shepherd hunter tailor cook
servant maid student clerk banker driver pilot writer artist
musician singer waitress waiter bartender detective agent judge scientist engineer sailor witch wizard knight
professor secretary journalist reporter thief guard nun monk shopkeeper landlord housekeeper gardener cashier
""".split()
)
OCCUPATIONS_ZH = (
    "老板",
    "律师",
    "医生",
    "警察",
    "警官",
    "牧师",
    "护士",
    "院士",
    "局长",
    "法官",
    "经理",
    "服务员",
    "船员",
    "收银员",
    "主任",
    "老师",
    "司机",
    "厂长",
    "队长",
    "警员",
    "商人",
    "渔夫",
)
RELATION_WORDS_EN = (
    "wife",
    "husband",
    "brother",
    "sister",
    "son",
    "daughter",
    "father",
    "mother",
    "friend",
    "boss",
    "assistant",
    "uncle",
    "aunt",
    "cousin",
    "girlfriend",
    "boyfriend",
    "partner",
    "colleague",
    "lover",
    "fiancé",
    "fiancée",
    "nephew",
    "niece",
    "grandfather",
    "grandmother",
    "widow",
    "neighbour",
)
RELATION_WORDS_ZH = (
    "妻子",
    "丈夫",
    "老婆",
    "老公",
    "儿子",
    "女儿",
    "爸爸",
    "父亲",
    "母亲",
    "妈妈",
    "哥哥",
    "姐姐",
    "弟弟",
    "妹妹",
    "朋友",
    "前妻",
    "姐夫",
    "小舅子",
    "同事",
    "邻居",
    "岳父",
    "岳母",
)
BODY_PARTS = frozenset(
    "hand hands face eyes eye head arm arms shoulder shoulders fingers voice mouth hair back feet".split()
)
MAX_VALUE_CHARS = 160


def _slug(name: str) -> str:
    slug = re.sub(r"[^\w]+", "_", name.casefold()).strip("_")
    return slug or "entity"


def _short(text: str) -> str:
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1].rstrip() + "…"


def _surfaces(inputs: NarrativeInputs, entity_id: str) -> list[str]:
    return inputs.surfaces_by_entity.get(entity_id, [])


# What follows an entity's name in each per-entity pattern below, compiled once. A pattern is the
# entity's name alternation followed by its tail, so a text the tail finds nothing in cannot match
# the pattern either: an entity's own patterns are compiled only for texts that pass (compiling
# them for every entity of a document was a fifth of extract_facts' CPU).
_TAILS = {
    "age": r"(?i)\s*\(\s*((?:early|mid|late)[ -]\d0s|\d{1,3}s?)\s*\)",
    "role": (
        r"(?i)(?:\s*\([^)]*\))?,\s+((?:the|a|an|his|her|their)\s+[^,.;]{3,60}?)"
        r"(?=,|\.|;| and | with )"
    ),
    "possession": r"(?i)['’]s\s+((?:[a-z\-]+\s+)?[a-z\-]+)",
}
_RELATION_WORDS_RE = "|".join(RELATION_WORDS_EN)
_TAILS["relation"] = rf"(?i)['’]s\s+(?:[a-z\-]+\s+)?({_RELATION_WORDS_RE})\b"
_TAIL_PATTERNS = {kind: re.compile(tail) for kind, tail in _TAILS.items()}


# Patterns are compiled once per (kind, name alternation): a document's entities and their pairs
# make far more distinct patterns than the re module's own cache keeps.
@lru_cache(maxsize=4096)
def _name_pattern(kind: str, name_re: str) -> re.Pattern[str]:
    """The `kind` pattern (age, role, possession, relation) of an entity whose surfaces match `name_re`."""
    return re.compile(f"(?i)(?:{name_re})" + _TAILS[kind].removeprefix("(?i)"))


def _search(kind: str, name_re: str, text: str) -> re.Match[str] | None:
    if _TAIL_PATTERNS[kind].search(text) is None:
        return None
    return _name_pattern(kind, name_re).search(text)


def _finditer(kind: str, name_re: str, text: str) -> list[re.Match[str]]:
    if _TAIL_PATTERNS[kind].search(text) is None:
        return []
    return list(_name_pattern(kind, name_re).finditer(text))


# "lived with his wife" where the other entity is called "wife": the kinship word names it.
_OWN_RELATION = re.compile(rf"(?i)\b(?:his|her|their|my)\s+(?:[a-z\-]+\s+)?({_RELATION_WORDS_RE})\b")


def derive_attributes(
    inputs: NarrativeInputs,
    entity: dict[str, Any],
    facts: list[dict[str, Any]],
    relations: pd.DataFrame | RelationIndex | None,
) -> dict[str, tuple[str, list[str]]]:
    """key -> (value, supporting fact ids) for one entity (pass a RelationIndex built once when
    deriving many entities)."""
    if not isinstance(relations, RelationIndex):
        relations = RelationIndex(relations)
    entity_id, language = entity["entity_id"], inputs.language
    attributes: dict[str, tuple[str, list[str]]] = {}
    surfaces = _surfaces(inputs, entity_id)
    name_re = "|".join(re.escape(s) for s in surfaces) or re.escape(str(entity["name"]))

    def put(key: str, value: str, fact_ids: list[str]) -> None:
        if value.strip() and key not in attributes:
            attributes[key] = (_short(value.strip()), list(dict.fromkeys(fact_ids)))

    if language == "zh":
        _zh_name_attributes(inputs, entity, put)
    for fact in facts:
        text, fact_id = fact["text"], fact["fact_id"]
        if language == "zh":
            age = re.search(r"(\d{1,3})\s*岁", text)
            if age:
                put("age", f"{age.group(1)}岁", [fact_id])
            continue
        age = _search("age", name_re, text)
        if age:
            put("age", age.group(1), [fact_id])
        role = _search("role", name_re, text)
        if role:
            put("role", role.group(1), [fact_id])
            head = next(
                (w for w in reversed(re.findall(r"[a-z\-]+", role.group(1).lower())) if w in OCCUPATIONS_EN),
                None,
            )
            if head:
                put("occupation", head, [fact_id])
        for match in _finditer("possession", name_re, text):
            thing = match.group(1).lower()
            if thing.split()[-1] not in BODY_PARTS and thing.split()[-1] not in RELATION_WORDS_EN:
                put("possession", thing, [fact_id])
        _relation_from_possessive(inputs, entity_id, fact, put)
    by_type = {kind: [f for f in facts if f["fact_type"] == kind] for kind in ("goal", "mental_state")}
    if by_type["goal"]:
        put("goal", by_type["goal"][0]["text"], [by_type["goal"][0]["fact_id"]])
    if by_type["mental_state"]:
        put(
            "latest_mental_state",
            by_type["mental_state"][-1]["text"],
            [by_type["mental_state"][-1]["fact_id"]],
        )
    _affiliation(inputs, entity_id, facts, put)
    _relations_table(inputs, entity_id, facts, relations, put)
    return attributes


def _zh_name_attributes(inputs: NarrativeInputs, entity: dict[str, Any], put: Any) -> None:
    # "程勇爸爸", "吕受益妻子": a Chinese name made of another entity's name and a kinship word.
    name = str(entity["name"])
    for word in RELATION_WORDS_ZH:
        if name.endswith(word) and len(name) > len(word):
            other = inputs.lexicon.resolve_one(name[: -len(word)])
            if other and other != entity["entity_id"]:
                put(f"relationship_to_{_slug(inputs.lexicon.name(other))}", word, [])
    occupation = next((w for w in OCCUPATIONS_ZH if w in name), None)
    if occupation:
        put("occupation", occupation, [])


def _relation_from_possessive(
    inputs: NarrativeInputs, entity_id: str, fact: dict[str, Any], put: Any
) -> None:
    # "..., Tom's sister, ..." in a fact about Margaret: Margaret is Tom's sister.
    own_relation = _OWN_RELATION.search(fact["text"])  # the same for every related entity
    for other in fact["related_entity_ids"]:
        other_re = "|".join(re.escape(s) for s in _surfaces(inputs, other))
        if not other_re:
            continue
        match = _search("relation", other_re, fact["text"])
        own = own_relation
        if own and own.group(1).casefold() not in {s.casefold() for s in _surfaces(inputs, other)}:
            own = None
        if match or own:
            word = (match or own).group(1).lower()
            put(f"relationship_to_{_slug(inputs.lexicon.name(other))}", word, [fact["fact_id"]])


def _affiliation(inputs: NarrativeInputs, entity_id: str, facts: list[dict[str, Any]], put: Any) -> None:
    counts = Counter(
        e for f in facts for e in f["related_entity_ids"] if inputs.lexicon.types.get(e) == "institution"
    )
    if counts:
        institution = sorted(counts, key=lambda e: (-counts[e], e))[0]
        put(
            "affiliation",
            inputs.lexicon.name(institution),
            [f["fact_id"] for f in facts if institution in f["related_entity_ids"]],
        )


def _relations_table(
    inputs: NarrativeInputs,
    entity_id: str,
    facts: list[dict[str, Any]],
    relations: RelationIndex,
    put: Any,
    limit: int = 3,
) -> None:
    """The strongest relations to characters that the entity's facts also attest."""
    added = 0
    for relation in relations.of(entity_id):
        other = (
            relation["target_entity_id"]
            if relation["source_entity_id"] == entity_id
            else relation["source_entity_id"]
        )
        support = [f["fact_id"] for f in facts if other in f["related_entity_ids"]]
        if not support or inputs.lexicon.types.get(other) != "character":
            continue
        keywords = [k for k in (list(relation["keywords"]) if relation["keywords"] is not None else []) if k]
        value = str(relation.get("description") or "").strip() or ", ".join(keywords)
        if value:
            put(f"relationship_to_{_slug(inputs.lexicon.name(other))}", value, support)
            added += 1
        if added >= limit:
            return


def compose_summary(
    inputs: NarrativeInputs,
    entity: dict[str, Any],
    facts: list[dict[str, Any]],
    attributes: dict[str, tuple[str, list[str]]],
    n_sections: int,
) -> str:
    """A short profile: name with age and role, where it appears, and a few telling facts."""
    name, zh = str(entity["name"]), inputs.language == "zh"
    picks: list[str] = []
    for kind in ("attribute", "relation", "goal", "mental_state", "cause", "state"):
        fact = next((f for f in facts if f["fact_type"] == kind and f["text"] not in picks), None)
        if fact is not None:
            picks.append(fact["text"])
    actions = [f["text"] for f in facts if f["fact_type"] == "action"]
    picks.extend(a for a in actions[-1:] if a not in picks)
    details = [attributes[k][0] for k in ("role", "occupation") if k in attributes][:1]
    if zh:
        head = (
            name
            + (f"（{attributes['age'][0]}）" if "age" in attributes else "")
            + (f"，{details[0]}" if details else "")
        )
        body = f"{head}。出现在{n_sections}个场景或段落中。" + "".join(
            p if p.endswith(("。", "”", "！", "？")) else p + "。" for p in picks[:4]
        )
    else:
        age = f" ({attributes['age'][0]})" if "age" in attributes else ""
        head = f"{name}{age}" + (f", {details[0]}" if details else "")
        relation_keys = [k for k in attributes if k.startswith("relationship_to_")]
        related = join_names(
            [k[len("relationship_to_") :].replace("_", " ").title() for k in relation_keys[:3]], "en"
        )
        body = (
            f"{head}. Appears in {n_sections} section{'s' if n_sections != 1 else ''}"
            + (f"; connected to {related}" if related else "")
            + ". "
            + " ".join(p if p.endswith((".", "!", "?", "\u201d", '"')) else p + "." for p in picks[:4])
        )
    return body.strip()[:1200]


def add_entity_rows(
    out: dict[str, list[dict[str, Any]]],
    inputs: NarrativeInputs,
    entity: dict[str, Any],
    facts: list[dict[str, Any]],
    attributes: dict[str, tuple[Any, list[str]]],
    sections: list[str],
    spread: list[int],
    method: str,
) -> None:
    """Append one profiled entity's facts, attribute rows and profile row to `out`."""
    out["atomic_facts"].extend(facts)
    out["entity_attributes"].extend(
        {"doc_id": inputs.doc_id, "entity_id": entity["entity_id"], "key": k, "value": v, "fact_ids": ids}
        for k, (v, ids) in attributes.items()
    )
    out["entity_profiles"].append(
        {
            "entity_id": entity["entity_id"],
            "doc_id": inputs.doc_id,
            "summary": compose_summary(inputs, entity, facts, attributes, len(set(sections))),
            "n_facts": len(facts),
            "first_ordinal": min(spread) if spread else None,
            "last_ordinal": max(spread) if spread else None,
            "method": method,
        }
    )
