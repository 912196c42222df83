"""Stage embed_assets: one vector per narrative asset of the bundled samples, each for the text
query time searches, and every asset table covered."""

import numpy as np

from tasks.tables.io import read_frame

ASSET_TABLES = {
    "entity": ("entities", "entity_id"),
    "fact": ("atomic_facts", "fact_id"),
    "event": ("events", "event_id"),
    "interaction": ("interactions", "interaction_id"),
    "occasion": ("occasions", "occasion_id"),
    "episode": ("episodes", "episode_id"),
    "storyline": ("storylines", "storyline_id"),
    "relation": ("relations", "relation_id"),
}


def test_every_asset_has_one_unit_vector(sample_workspace):
    for doc_id in ("the_lighthouse_key", "the_fisherman_and_his_wife"):
        vectors = read_frame(sample_workspace, "asset_embeddings", doc_id)
        assert not vectors.duplicated(["unit_kind", "unit_id", "model"]).any()
        for kind, (table, key) in ASSET_TABLES.items():
            ids = set(read_frame(sample_workspace, table, doc_id)[key])
            embedded = set(vectors.loc[vectors["unit_kind"] == kind, "unit_id"])
            assert embedded == ids, (doc_id, kind)
        assert vectors["text"].str.strip().str.len().gt(0).all()
        norms = np.linalg.norm(np.array(vectors["vector"].tolist()), axis=1)
        assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)
