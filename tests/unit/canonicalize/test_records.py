"""What one entity record carries into a merge request: one line with name, type, other names
(no case variants), the first words of the description and merged mention windows."""

from __future__ import annotations

import pandas as pd

from schemas.config import CanonicalizeEntitiesSettings
from tasks.canonicalize.records import DESCRIPTION_WORDS, entity_record, mention_samples, merge_requests

TEXT = "JOHN Fine. NADIA smiles at John and starts knitting. " + "x " * 80 + "Later NADIA leaves the house."
CHUNKS = pd.DataFrame([{"chunk_id": "c1", "char_start": 100, "text": TEXT, "doc_id": "d"}])


def _mentions(entity: str, surface: str) -> list[dict]:
    return [
        {"raw_entity_id": entity, "chunk_id": "c1", "char_start": 100 + i, "char_end": 100 + i + len(surface)}
        for i in range(len(TEXT))
        if TEXT.startswith(surface, i)
    ]


def test_a_record_is_one_line_without_repeated_names() -> None:
    raw = {
        "name": "Nadia",
        "entity_type": "character",
        "surfaces": ["NADIA", "Nadia", "Sophia"],
        "description": "A young Russian woman. " + "word " * 80,
    }
    mentions = pd.DataFrame(_mentions("n", "NADIA"))
    samples = mention_samples(mentions, {"c1": (100, TEXT)})
    line = entity_record(raw, samples)
    assert "\n" not in line
    assert line.startswith("Nadia (character; also: Sophia): A young Russian woman.")
    assert len(line.split(" | ")[0].split()) <= DESCRIPTION_WORDS + 5  # the description is cut
    assert len(samples) == 2 and all("NADIA" in s for s in samples)  # two windows far apart
    assert (
        entity_record({**raw, "surfaces": [], "description": ""}, [])
        == "Nadia (character): - | (no mentions)"
    )


def test_close_mentions_share_one_window() -> None:
    mentions = pd.DataFrame(_mentions("j", "JOHN") + _mentions("j", "John"))
    samples = mention_samples(mentions.sort_values("char_start"), {"c1": (100, TEXT)})
    assert len(samples) == 1 and "JOHN Fine" in samples[0] and "at John" in samples[0]


def test_requests_show_each_record_once_and_every_pair() -> None:
    raw = pd.DataFrame(
        [
            {"raw_entity_id": e, "name": n, "entity_type": "character", "surfaces": [n], "description": ""}
            for e, n in (("a", "John"), ("b", "Johnny"), ("c", "Jo"))
        ]
    )
    mentions = pd.DataFrame(_mentions("a", "JOHN"))
    plan = merge_requests(
        [("a", "b", 0.8), ("a", "c", 0.6), ("b", "c", 0.5)],
        raw,
        mentions,
        CHUNKS,
        CanonicalizeEntitiesSettings(),
    )
    assert plan.groups == [["a|b", "a|c", "b|c"]]
    values = plan.values(plan.groups[0], "T", "en")
    assert values["records"].splitlines() == [
        'R1 John (character): - | "…JOHN Fine. NADIA smiles at John and starts knitti…"',
        "R2 Johnny (character): - | (no mentions)",
        "R3 Jo (character): - | (no mentions)",
    ]
    assert values["pairs"].splitlines() == ["1. R1 and R2", "2. R1 and R3", "3. R2 and R3"]
