"""The inputs every continuity stage reads: the scene-entity graph of the document."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tasks.continuity.scenes import SceneGraph, scene_graph
from tasks.stage import StageContext

SCENE_TABLES = ("sections", "entities", "mentions", "occasions", "events", "interactions", "atomic_facts")


def stage_scenes(ctx: StageContext) -> SceneGraph:
    return scene_graph(ctx.doc_id, {name: ctx.tables[name] for name in SCENE_TABLES if name in ctx.tables})


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dict("records") if len(frame) else []
