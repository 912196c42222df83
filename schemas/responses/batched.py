"""Batched replies: one request carries several numbered items of a stage (instructions sent
once), and the reply lists one answer per item with the item's number. `batch_model(M)` is the
reply model for items answered with `M`; the stage maps each answer back by its number."""

from __future__ import annotations

from functools import lru_cache

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


FactsBatch = batch_model(FactsReply)
MergeBatch = batch_model(MergeJudgement)
ShortcutBatch = batch_model(ShortcutJudgment)
EpisodeDescriptionBatch = batch_model(EpisodeDescription)
StorylineDescriptionBatch = batch_model(StorylineDescription)
