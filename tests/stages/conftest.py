"""A small screenplay and a small Chinese scene run through the real stage runner up to
`embed_texts` (Parquet in, Parquet out, contracts checked), shared by the segmentation and
indexing stage tests."""

from __future__ import annotations

import pytest

from flows.build.corpus import build, make_resources
from flows.stages import select_stages
from schemas.config import load_settings
from tasks.embeddings import HashingEmbedder
from tasks.tables.io import Workspace

SCREENPLAY = """Title: Kitchen Test

1 INT. KITCHEN - NIGHT 1

ANNA (30s) pours tea. A BRASS KEY lies on the table.

ANNA
Ben, where were you?

BEN (O.S.)
Out. Looking for the key.

EXT. GARDEN - DAY

Ben digs. He finds nothing.

BEN (CONT'D)
(muttering)
Gone.
"""

CHINESE = """1.     王子神油店日内
程勇在店里。电话铃声响起。
宾馆老板：老程！房租赶紧付吧。
程勇：交不出来啊。

2.街道夜外
程勇看着车走远。
"""


@pytest.fixture(scope="session")
def segmented(tmp_path_factory) -> Workspace:
    """`kitchen` (English, Fountain) and `shop` (Chinese) built through embed_texts."""
    folder = tmp_path_factory.mktemp("segmented")
    (folder / "kitchen.fountain").write_text(SCREENPLAY, encoding="utf-8")
    (folder / "shop.txt").write_text(CHINESE, encoding="utf-8")
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    workspace = Workspace.at(folder / "ws")
    resources = make_resources(settings, embedder_factory=lambda: HashingEmbedder(64))
    report = build(
        [str(folder / "kitchen.fountain"), str(folder / "shop.txt")],
        workspace,
        settings,
        stages=select_stages(until="embed_texts"),
        resources=resources,
        quiet=True,
    )
    assert report.ok, [o for d in report.documents for o in d.outcomes if o.status != "built"]
    return workspace
