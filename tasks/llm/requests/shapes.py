"""How each grouped LLM stage asks the model, declared once: its prompt, the model of one item's
answer, the settings that bound a request (source tokens, items), and the reply tokens each
answered item may take.

The stage sends its requests through `run_grouped(ctx, SHAPES[name], ...)`; the largest-request
estimate (`budget`), the dry run and the tests read the same declaration, so a stage's request
shape changes in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from schemas.config import Settings
from schemas.responses.continuity import ContinuityJudgment, StatesCritique, StatesReply
from schemas.responses.graph import MergeJudgement
from schemas.responses.hierarchy import (
    EpisodeDescription,
    EpisodeRelationJudgment,
    ShortcutJudgment,
    StorylineDescription,
)
from schemas.responses.narrative import FactsReply
from schemas.responses.summaries import WrittenSummary


@dataclass(frozen=True)
class RequestShape:
    """One kind of grouped request: several numbered items of a stage answered in one reply."""

    name: str  # the request's own name (a stage may send two kinds: extract and critique)
    build_stage: str  # the stage in flows/stages.py that sends it
    prompt_id: str
    answer_model: type[BaseModel]  # one item's answer; the reply numbers one per item
    section: str  # the settings section holding the request's bounds
    pack_field: str  # source tokens one request may carry
    items_field: str  # most items one request may carry
    reply_tokens_per_item: int  # the reply limit grows by this much per item asked

    def pack_tokens(self, settings: Settings) -> int:
        return int(getattr(getattr(settings, self.section), self.pack_field))

    def most_items(self, settings: Settings) -> int:
        return int(getattr(getattr(settings, self.section), self.items_field))


_DECLARED = (
    RequestShape(
        "canonicalize_entities", "canonicalize_entities", "canonicalize_entities/v3", MergeJudgement,
        "canonicalize_entities", "pack_tokens", "max_pairs_per_request", 120,
    ),
    RequestShape(
        "extract_facts", "extract_facts", "extract_facts/v2", FactsReply,
        "extract_facts", "pack_tokens", "max_entities_per_request", 700,
    ),
    RequestShape(
        "assemble_episodes", "assemble_episodes", "assemble_episodes/v3", EpisodeDescription,
        "assemble_episodes", "pack_tokens", "max_per_request", 300,
    ),
    RequestShape(
        "relate_episodes", "relate_episodes", "relate_episodes/v4", EpisodeRelationJudgment,
        "relate_episodes", "pack_tokens", "max_pairs_per_request", 110,
    ),
    RequestShape(
        "break_cycles", "break_cycles", "break_cycles/v3", ShortcutJudgment,
        "break_cycles", "pack_tokens", "max_per_request", 90,
    ),
    RequestShape(
        "induce_storylines", "induce_storylines", "induce_storylines/v2", StorylineDescription,
        "induce_storylines", "pack_tokens", "max_per_request", 400,
    ),
    RequestShape(
        "summarize_hierarchy", "summarize_hierarchy", "summarize_hierarchy/v3", WrittenSummary,
        "summarize_hierarchy", "pack_tokens", "max_per_request", 450,
    ),
    RequestShape(
        "judge_continuity", "judge_continuity", "judge_continuity/v2", ContinuityJudgment,
        "continuity", "pack_tokens", "max_candidates_per_request", 280,
    ),
    RequestShape(
        "character_states", "track_character_states", "extract_states/v3", StatesReply,
        "character_states", "pack_tokens", "max_scenes_per_request", 400,
    ),
    RequestShape(
        "character_states_critic", "track_character_states", "critique_states/v3", StatesCritique,
        "character_states", "pack_tokens", "max_scenes_per_request", 160,
    ),
)
SHAPES: dict[str, RequestShape] = {shape.name: shape for shape in _DECLARED}

# The combined extraction (graph, narrative units, facts and states of a pack of chunks in one reply) is
# not grouped by item: its reply limit grows with the source it carries.
COMBINED_PROMPT_ID = "extract_graph/v4"
COMBINED_REPLY_FRAME_TOKENS = 256  # the reply's keys and brackets, whatever the passage's length
COMBINED_REPLY_TOKENS_PER_SOURCE_TOKEN = 2  # a reply lists entities, relations, units and facts


def shapes_of(build_stage: str) -> list[RequestShape]:
    """The grouped requests a build stage sends (none for a stage that does not group)."""
    return [shape for shape in _DECLARED if shape.build_stage == build_stage]


def grouped_prompts(build_stage: str) -> tuple[str, ...]:
    """The prompt ids of a build stage's grouped requests, as its stage declaration lists them."""
    return tuple(shape.prompt_id for shape in shapes_of(build_stage))
