"""`--dry-run` without a previous build: item counts come from the stated assumptions, and the
grouped stages' requests follow the stages' own bounds (items per request, token budget), so a
bound of one item a request estimates one request per item and larger bounds fewer."""

from __future__ import annotations

import math

from flows.build.dry_run import ASSUMPTIONS, dry_run, measure_corpus
from flows.stages import select_stages
from schemas.config import load_settings
from tasks.llm.requests.shapes import SHAPES
from tests.conftest import SCREENPLAY

# every grouped stage with its most-items bound, read from the stages' request declaration
GROUPED = {shape.build_stage: (shape.section, shape.items_field) for shape in SHAPES.values()}


def _calls(overrides: dict) -> dict[str, int]:
    settings = load_settings(overrides={"llm": {"url": "http://127.0.0.1:9/v1"}, **overrides})
    return {r["stage"]: r["calls"] for r in dry_run([str(SCREENPLAY)], select_stages(), settings)["stages"]}


def test_grouped_stages_follow_their_request_bounds():
    grouped = _calls({})
    one_each = _calls({section: {field: 1} for section, field in GROUPED.values()})
    for stage in GROUPED:
        # a stage off by default (extract_facts) or with a fraction of a request estimates none
        assert grouped[stage] <= one_each[stage], stage
        if one_each[stage] > 1:
            assert grouped[stage] < one_each[stage], stage
    on_by_default = [stage for stage in GROUPED if stage not in ("canonicalize_entities", "extract_facts")]
    assert all(grouped[stage] > 0 for stage in on_by_default)
    settings = load_settings()
    corpus, _ = measure_corpus([str(SCREENPLAY)], settings)
    episodes = corpus.sections * ASSUMPTIONS["episodes_per_section"]
    assert one_each["assemble_episodes"] == math.ceil(episodes - 1e-9)
    assert one_each["induce_storylines"] == settings.induce_storylines.max_storylines
    rounds = ASSUMPTIONS["state_rounds_per_section"]
    # a critic request each round, an extract request each round but the first (the combined
    # extraction wrote that one)
    assert one_each["track_character_states"] == round((2 * rounds - 1) * corpus.sections)
