"""Named rules that decide a blocked candidate pair: merge, separate, or no decision.

English names: a cue or first name joins the only full name it starts; a titled surname joins
the only full name of the right gender; a bare surname shared by several full names stays
apart; speakers who trade lines are different people; role words ("Kid") are not names.
Chinese names are decided by `zh_name_rules`, from the document's Chinese character names.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pandas as pd
from rapidfuzz import fuzz

from tasks.canonicalize.merge import Decision
from tasks.canonicalize.profiles import Profile, similarity
from tasks.canonicalize.zh_name_rules import decide_zh
from tasks.graph.screenplay import ROLE_WORDS


class RuleBook:
    """The rule decisions for blocked pairs, using document-wide name indices."""

    def __init__(
        self, profiles: dict[str, Profile], raw_relations: pd.DataFrame, name_similarity: float
    ) -> None:
        self.profiles = profiles
        self.name_similarity = name_similarity
        self.full_by_token: dict[str, list[Profile]] = defaultdict(list)
        self.zh_names: list[Profile] = []
        for p in sorted(profiles.values(), key=lambda p: p.raw_id):
            if p.entity_type != "character" or p.is_proxy:
                continue
            if p.is_zh:
                self.zh_names.append(p)
            elif p.parts.is_full and p.parts.title is None:
                for token in {p.parts.first, p.parts.last}:
                    self.full_by_token[token].append(p)
        # Spelling variants of one full name ("Cohee Lundin" / "Cohee Lundon") count as one candidate.
        self.variant: dict[str, str] = {}
        fulls = sorted(
            {p.raw_id: p for ps in self.full_by_token.values() for p in ps}.values(), key=lambda p: p.raw_id
        )
        for p in fulls:
            self.variant[p.raw_id] = next(
                (
                    self.variant[q.raw_id]
                    for q in fulls
                    if q.raw_id < p.raw_id
                    and q.parts.first == p.parts.first
                    and similarity(p, q) >= name_similarity
                ),
                p.raw_id,
            )
        # Two speakers who trade lines are two people, whatever their names say.
        self.conversing = {
            tuple(sorted((r.source_raw_id, r.target_raw_id)))
            for r in raw_relations.itertuples()
            if "exchange" in str(r.method)
        }

    def decide(self, left: str, right: str, score: float) -> Decision | None:
        a, b = self.profiles[left], self.profiles[right]
        if (left, right) in self.conversing:
            return Decision(
                left,
                right,
                "separate",
                "rule:interacting",
                score,
                f"'{a.name}' and '{b.name}' speak to each other in a dialogue exchange",
            )
        if a.entity_type != "character":
            short, long_ = sorted((a, b), key=lambda p: (len(p.name), p.raw_id))
            if a.is_zh and len(short.name) >= 3 and long_.name.endswith(short.name):
                holders = sorted(
                    p.name
                    for p in self.profiles.values()
                    if p.entity_type == short.entity_type
                    and p.name != short.name
                    and p.name.endswith(short.name)
                )
                if len(holders) == 1:
                    return Decision(
                        left,
                        right,
                        "merge",
                        "rule:name_containment",
                        score,
                        f"'{short.name}' is the short form of '{long_.name}'",
                    )
                return Decision(
                    left,
                    right,
                    "separate",
                    "rule:ambiguous_name",
                    score,
                    f"'{short.name}' could be any of {', '.join(holders)}: kept separate",
                )
            if _spelling_variants(a, b, score, self.name_similarity):
                return Decision(
                    left,
                    right,
                    "merge",
                    "rule:name_similarity",
                    score,
                    f"'{a.name}' and '{b.name}' are spellings of one name ({score:.2f})",
                )
            return None
        if a.is_zh or b.is_zh:
            return decide_zh(self.zh_names, a, b, score)
        return self._decide_en(a, b, score)

    def _decide_en(self, a: Profile, b: Profile, score: float) -> Decision | None:
        if (set(a.parts.tokens) | set(b.parts.tokens)) & ROLE_WORDS:
            return None  # "Kid" / "Little Kid" are roles, not names: no name rule applies
        if a.parts.is_full and b.parts.is_full and a.parts.title is None and b.parts.title is None:
            return self._two_full_names(a, b, score)
        short, full = (a, b) if len(a.parts.tokens) < len(b.parts.tokens) else (b, a)
        if len(short.parts.tokens) == 1 and full.parts.is_full and full.parts.title is None:
            return self._short_form(short, full, score)
        if len(a.parts.tokens) == 1 and len(b.parts.tokens) == 1:
            return self._two_short_forms(a, b, score)
        return None

    def _two_full_names(self, a: Profile, b: Profile, score: float) -> Decision:
        left, right = sorted((a.raw_id, b.raw_id))
        if a.parts.first == b.parts.first and score >= self.name_similarity:
            return Decision(
                left,
                right,
                "merge",
                "rule:name_similarity",
                score,
                f"'{a.name}' and '{b.name}' differ only by a spelling variant ({score:.2f})",
            )
        if a.parts.last == b.parts.last and a.parts.first != b.parts.first:
            return Decision(
                left,
                right,
                "separate",
                "rule:different_given_name",
                score,
                f"'{a.name}' and '{b.name}' share the surname '{a.parts.last}' but not the given name",
            )
        return Decision(
            left,
            right,
            "separate",
            "rule:different_full_name",
            score,
            f"'{a.name}' and '{b.name}' are different full names",
        )

    def _short_form(self, short: Profile, full: Profile, score: float) -> Decision:
        """'John' / 'Mr. Crowe' / 'Smith' against the full names it could stand for."""
        left, right = sorted((short.raw_id, full.raw_id))
        token = short.parts.tokens[0]
        holders = self.full_by_token.get(token, [])
        # Only a title is strong enough to choose by gender; pronoun evidence just rules people out.
        fits = [p for p in holders if _gender_fits(short, p)] if short.parts.title else holders
        if full.raw_id not in {p.raw_id for p in fits}:
            return Decision(
                left,
                right,
                "separate",
                "rule:gender_conflict",
                score,
                f"'{short.name}' ({short.gender or '?'}) cannot be '{full.name}' ({full.gender or '?'})",
            )
        if len({self.variant[p.raw_id] for p in fits}) > 1:
            names = ", ".join(sorted(p.name for p in fits))
            return Decision(
                left,
                right,
                "separate",
                "rule:ambiguous_name",
                score,
                f"'{short.name}' is ambiguous between {names}: kept separate",
            )
        if full.parts.first == token and short.parts.title is None:
            return Decision(
                left,
                right,
                "merge",
                "rule:cue_fullname",
                1.0,
                f"'{short.name}' is the first name of exactly one full name, '{full.name}'",
            )
        if full.parts.first == token:
            return Decision(
                left,
                right,
                "merge",
                "rule:title_first_name",
                1.0,
                f"'{short.name}' is a titled first name of exactly one full name, '{full.name}'",
            )
        if short.parts.title is not None:
            return Decision(
                left,
                right,
                "merge",
                "rule:surname_title",
                1.0,
                f"'{short.name}' fits exactly one '{token}' of the right gender: '{full.name}'",
            )
        return Decision(
            left,
            right,
            "merge",
            "rule:surname_unique",
            1.0,
            f"'{short.name}' is the surname of exactly one full name, '{full.name}'",
        )

    def _two_short_forms(self, a: Profile, b: Profile, score: float) -> Decision | None:
        left, right = sorted((a.raw_id, b.raw_id))
        ta, tb = a.parts.tokens[0], b.parts.tokens[0]
        if ta == tb:  # "Mr. Crowe" and "Crowe": one person unless several full names share the word
            holders = {self.variant[p.raw_id] for p in self.full_by_token.get(ta, [])}
            if len(holders) > 1:
                return Decision(
                    left,
                    right,
                    "separate",
                    "rule:ambiguous_name",
                    score,
                    f"'{ta}' is shared by several full names; '{a.name}' and '{b.name}' kept apart",
                )
            if a.gender and b.gender and a.gender != b.gender:
                return Decision(
                    left,
                    right,
                    "separate",
                    "rule:gender_conflict",
                    score,
                    f"'{a.name}' and '{b.name}' carry different genders",
                )
            return Decision(
                left,
                right,
                "merge",
                "rule:title_variant",
                1.0,
                f"'{a.name}' and '{b.name}' name the same '{ta}'",
            )
        shorter, longer = sorted((ta, tb), key=len)
        if (
            len(shorter) >= 4
            and longer.startswith(shorter)
            and not (a.gender and b.gender and a.gender != b.gender)
        ):
            return Decision(
                left, right, "merge", "rule:name_prefix", score, f"'{shorter}' is a short form of '{longer}'"
            )
        return None


def _spelling_variants(a: Profile, b: Profile, score: float, threshold: float) -> bool:
    """'Multi Storey Car Park' / 'Multi-Storey Car Park', 'comic book' / 'comic books' — but not
    'Inside Alexei's Suite' / 'Outside Alexei's Suite', whose differing word is another word."""
    compact = lambda p: re.sub(r"[\W_]+", "", p.key).rstrip("s")  # noqa: E731
    if compact(a) == compact(b):
        return True
    ta, tb = a.key.replace("-", " ").split(), b.key.replace("-", " ").split()
    if score < threshold or len(ta) != len(tb):
        return False
    return all(x == y or fuzz.ratio(x, y) >= 80 for x, y in zip(ta, tb))


def _gender_fits(short: Profile, full: Profile) -> bool:
    return short.gender is None or full.gender is None or short.gender == full.gender


def rule_decisions(
    profiles: dict[str, Profile],
    pairs: list[tuple[str, str, float]],
    raw_relations: pd.DataFrame,
    name_similarity: float,
) -> tuple[list[Decision], list[tuple[str, str, float]]]:
    """Rule decisions for the pairs, and the pairs no rule could decide."""
    book = RuleBook(profiles, raw_relations, name_similarity)
    decided, undecided = [], []
    for left, right, score in pairs:
        if profiles[left].is_proxy and profiles[right].is_proxy:
            continue
        decision = book.decide(left, right, score)
        (decided.append(decision) if decision else undecided.append((left, right, score)))
    return decided, undecided
