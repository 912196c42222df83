"""The largest request each LLM stage can send under given settings, in tokens: what a server's
context (vLLM's `--max-model-len`) must hold for NKW's requests to go out unclamped.

A grouped stage's request is at most its pack budget of source tokens, plus its instructions
and the reply's field list (measured from the prompt file and response model, at the client's
conservative 3 characters per token), plus a reply limit of `reply_limit(tokens per item, most
items per request)`. A server with a smaller context still works: the client cuts reply limits
to what its context leaves and splits groups whose replies do not fit, at the cost of more
requests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel

from schemas.config import Settings
from schemas.responses.batched import batch_model
from schemas.responses.combined import CombinedExtraction
from schemas.responses.continuity import ContinuityJudgment, StatesReply
from schemas.responses.graph import MergeJudgement
from schemas.responses.hierarchy import (
    EpisodeDescription,
    EpisodeRelationJudgment,
    ShortcutJudgment,
    StorylineDescription,
)
from schemas.responses.narrative import FactsReply
from tasks.llm.fields import describe_fields
from tasks.llm.grouped import reply_limit
from tasks.llm.pacing import DEFAULT_CHARS_PER_TOKEN
from tasks.llm.prompts import load_prompt

# stage: (prompt id, response model, settings section, pack budget field, most items field,
# reply tokens per item) -- the per-item figures are the ones each stage passes to run_grouped.
GROUPED = {
    "canonicalize_entities": (
        "canonicalize_entities/v3",
        MergeJudgement,
        "canonicalize_entities",
        "pack_tokens",
        "max_pairs_per_request",
        120,
    ),
    "extract_facts": (
        "extract_facts/v2",
        FactsReply,
        "extract_facts",
        "pack_tokens",
        "max_entities_per_request",
        700,
    ),
    "assemble_episodes": (
        "assemble_episodes/v3",
        EpisodeDescription,
        "assemble_episodes",
        "pack_tokens",
        "max_per_request",
        300,
    ),
    "relate_episodes": (
        "relate_episodes/v4",
        EpisodeRelationJudgment,
        "relate_episodes",
        "pack_tokens",
        "max_pairs_per_request",
        80,
    ),
    "break_cycles": (
        "break_cycles/v3",
        ShortcutJudgment,
        "break_cycles",
        "pack_tokens",
        "max_per_request",
        80,
    ),
    "induce_storylines": (
        "induce_storylines/v2",
        StorylineDescription,
        "induce_storylines",
        "pack_tokens",
        "max_per_request",
        400,
    ),
    "judge_continuity": (
        "judge_continuity/v2",
        ContinuityJudgment,
        "continuity",
        "pack_tokens",
        "max_candidates_per_request",
        120,
    ),
    "character_states": (
        "extract_states/v2",
        StatesReply,
        "character_states",
        "pack_tokens",
        "max_scenes_per_request",
        400,
    ),
}
COMBINED_FRAME, COMBINED_PER_SOURCE = 256, 2  # tasks.graph.combined's reply limit


@dataclass(frozen=True)
class RequestSize:
    stage: str
    prompt_tokens: int  # source budget + instructions + field list
    reply_tokens: int

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.reply_tokens


def _tokens(text: str) -> int:
    return math.ceil(len(text) / DEFAULT_CHARS_PER_TOKEN)


def _instructions(prompt_id: str, model: type[BaseModel]) -> int:
    try:
        text = load_prompt(prompt_id).text
    except ValueError:  # a renamed prompt: count the field list alone rather than fail the estimate
        text = ""
    return _tokens(text) + _tokens(describe_fields(model.model_json_schema()))


def largest_requests(settings: Settings) -> list[RequestSize]:
    """The largest request of each LLM stage under `settings`, largest first."""
    sizes = []
    for stage, (prompt_id, model, section, pack_field, items_field, per_item) in GROUPED.items():
        values = getattr(settings, section)
        prompt = getattr(values, pack_field) + _instructions(prompt_id, batch_model(model))
        sizes.append(RequestSize(stage, prompt, reply_limit(per_item, getattr(values, items_field))))
    source = settings.extract_graph.combined_pack_tokens
    sizes.append(
        RequestSize(
            "extract_graph",
            source + _instructions("extract_graph/v3", CombinedExtraction),
            COMBINED_FRAME + COMBINED_PER_SOURCE * source,
        )
    )
    return sorted(sizes, key=lambda size: -size.total)
