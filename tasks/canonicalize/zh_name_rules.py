"""The Chinese-name rules of canonicalization, for character pairs where either name is Chinese.

Kinship compounds (程勇爸爸) stay apart from their owner; a bare kinship noun (前妻) joins the
only character's compound; given names (小澍) and familiar forms (老程, when 程勇 is the only
程 present where it is used) join their full name. Separate from `rules` because these rules
read only the two profiles and the document's Chinese character names, none of the English
name indices the rule book builds.
"""

from __future__ import annotations

from tasks.canonicalize.merge import Decision
from tasks.canonicalize.profiles import Profile
from tasks.graph.names import ZH_FAMILIAR_PREFIXES, ZH_RELATION_NOUNS


def decide_zh(zh_names: list[Profile], a: Profile, b: Profile, score: float) -> Decision | None:
    """The Chinese-name rule decision for a pair of characters, or None when no rule applies."""
    left, right = sorted((a.raw_id, b.raw_id))
    for familiar, other in ((a, b), (b, a)):
        if (
            len(familiar.name) == 2
            and familiar.name.startswith(ZH_FAMILIAR_PREFIXES)
            and other.name.startswith(familiar.name[1])
            and len(other.name) >= 2
        ):
            return _familiar(zh_names, familiar, other, score)
    short, long_ = sorted((a, b), key=lambda p: (len(p.name), p.raw_id))
    if long_.name.startswith(short.name) and long_.name[len(short.name) :] in ZH_RELATION_NOUNS:
        return Decision(
            left,
            right,
            "separate",
            "rule:zh_kinship_compound",
            score,
            f"'{long_.name}' is {short.name}'s {long_.name[len(short.name) :]}, not {short.name}",
        )
    names = {p.name for p in zh_names}
    if (
        short.name in ZH_RELATION_NOUNS
        and long_.name.endswith(short.name)
        and long_.name[: -len(short.name)] in names
    ):
        # "前妻" alone for "程勇前妻": only when the owner is a character and owns no other 前妻
        owners = [p for p in zh_names if p.name.endswith(short.name) and p.name[: -len(short.name)] in names]
        if len(owners) == 1:
            return Decision(
                left,
                right,
                "merge",
                "rule:zh_role_owner",
                1.0,
                f"'{short.name}' is used alone for the only '{long_.name}'",
            )
        return Decision(
            left,
            right,
            "separate",
            "rule:ambiguous_name",
            score,
            f"'{short.name}' fits {', '.join(sorted(p.name for p in owners))}: kept separate",
        )
    if len(long_.name) == 3 and long_.name[1:] == short.name:
        return Decision(
            left,
            right,
            "merge",
            "rule:zh_given_name",
            1.0,
            f"'{short.name}' is the given name of '{long_.name}'",
        )
    return None


def _familiar(zh_names: list[Profile], familiar: Profile, person: Profile, score: float) -> Decision:
    """'老程' is 程勇 when 程勇 is the only 程 present where 老程 is used."""
    left, right = sorted((familiar.raw_id, person.raw_id))
    surname = familiar.name[1]
    people = [
        p
        for p in zh_names
        if p.name.startswith(surname)
        and len(p.name) >= 2
        and p.raw_id != familiar.raw_id
        and p.name[1:] not in ZH_RELATION_NOUNS
        and not any(p.name.endswith(n) for n in ZH_RELATION_NOUNS)
    ]
    present = [p for p in people if p.sections & familiar.sections]
    if len(present) == 1 and present[0].raw_id == person.raw_id:
        return Decision(
            left,
            right,
            "merge",
            "rule:zh_familiar_surname",
            1.0,
            f"'{familiar.name}' is used in scenes where '{person.name}' is the only {surname}",
        )
    if len(present) == 1:
        return Decision(
            left,
            right,
            "separate",
            "rule:zh_familiar_surname",
            score,
            f"'{familiar.name}' is {present[0].name} where it is used, not {person.name}",
        )
    return Decision(
        left,
        right,
        "separate",
        "rule:ambiguous_name",
        score,
        f"'{familiar.name}' could be {', '.join(sorted(p.name for p in present or people))}: kept separate",
    )
