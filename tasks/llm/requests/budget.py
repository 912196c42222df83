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
from tasks.llm.client.fields import describe_fields
from tasks.llm.client.pacing import DEFAULT_CHARS_PER_TOKEN
from tasks.llm.requests.grouped import reply_limit
from tasks.llm.requests.prompts import load_prompt
from tasks.llm.requests.shapes import (
    COMBINED_PROMPT_ID,
    COMBINED_REPLY_FRAME_TOKENS,
    COMBINED_REPLY_TOKENS_PER_SOURCE_TOKEN,
    SHAPES,
)


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
    for shape in SHAPES.values():
        prompt = shape.pack_tokens(settings) + _instructions(shape.prompt_id, batch_model(shape.answer_model))
        reply = reply_limit(shape.reply_tokens_per_item, shape.most_items(settings))
        sizes.append(RequestSize(shape.name, prompt, reply))
    source = settings.extract_graph.combined_pack_tokens
    sizes.append(
        RequestSize(
            "extract_graph",
            source + _instructions(COMBINED_PROMPT_ID, CombinedExtraction),
            COMBINED_REPLY_FRAME_TOKENS + COMBINED_REPLY_TOKENS_PER_SOURCE_TOKEN * source,
        )
    )
    return sorted(sizes, key=lambda size: -size.total)
