"""Batched replies: one request carries several numbered items of a stage (instructions sent
once), and the reply lists one answer per item with the item's number. `batch_model(M)` is the
reply model for items answered with `M`; the stage maps each answer back by its number.

The model validates leniently (a reply that left items out still gives the ones it answered); the
schema sent to the server for n items is `fixed_count_schema`: exactly n answers, the k-th with
the constant number k, so a server that enforces the schema cannot leave an item out."""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, create_model

from schemas.responses.base import ResponseModel
from schemas.responses.graph import MergeJudgement
from schemas.responses.hierarchy import EpisodeDescription, ShortcutJudgment, StorylineDescription
from schemas.responses.narrative import FactsReply

MAX_ITEMS = 64


@lru_cache(maxsize=None)
def batch_model(model: type[BaseModel]) -> type[ResponseModel]:
    """`{"items": [{"number": n, ...model fields}, ...]}` for items answered with `model`."""
    numbered = create_model(
        f"Numbered{model.__name__}",
        __base__=model,
        number=(int, Field(ge=1, description="the number of the item this answer is for")),
    )
    return create_model(
        f"{model.__name__}Batch",
        __base__=ResponseModel,
        items=(list[numbered], Field(max_length=MAX_ITEMS)),  # type: ignore[valid-type]
    )


def fixed_count_schema(schema: dict[str, Any], n: int) -> dict[str, Any]:
    """`batch_model(M)`'s JSON schema asking for exactly `n` answers, the k-th numbered k (written
    first, so the model reads which item it answers): `prefixItems`, one per position, and no more.
    Shared parts of the answer stay in `$defs`; each position repeats only the answer's own fields."""
    fixed = copy.deepcopy(schema)
    ref = fixed["properties"]["items"]["items"]["$ref"]
    answer = fixed["$defs"].pop(ref.rsplit("/", 1)[1])
    fields = {name: sub for name, sub in answer["properties"].items() if name != "number"}
    required = [name for name in answer.get("required", []) if name != "number"]
    positions = [
        {
            **answer,
            "properties": {"number": {"type": "integer", "const": k}, **fields},
            "required": ["number", *required],
        }
        for k in range(1, n + 1)
    ]
    # No `items: false`: maxItems = n already closes the list, and llama.cpp's own schema converter
    # (response_format) refuses a boolean schema there.
    fixed["properties"]["items"] = {"type": "array", "prefixItems": positions, "minItems": n, "maxItems": n}
    if not fixed["$defs"]:
        del fixed["$defs"]
    return fixed


FactsBatch = batch_model(FactsReply)
MergeBatch = batch_model(MergeJudgement)
ShortcutBatch = batch_model(ShortcutJudgment)
EpisodeDescriptionBatch = batch_model(EpisodeDescription)
StorylineDescriptionBatch = batch_model(StorylineDescription)
