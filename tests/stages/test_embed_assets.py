"""Stage embed_assets: one vector per narrative asset of the bundled samples, each for the text
query time searches, and every asset table covered; texts quoting source sentences derived from
the stored sentence vectors by default, embedded whole with `grounded_vectors = "embedded"`."""

import numpy as np

from tasks.embeddings import HashingEmbedder
from tasks.index import embed_assets
from tasks.tables.io import read_frame
from tasks.text import count_tokens
from tests.fixtures.stage_context import stage_context

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


class Recording:
    """The hashing embedder the samples were built with (same name), recording what it embeds."""

    def __init__(self) -> None:
        self.inner, self.seen = HashingEmbedder(384), []
        self.name = self.inner.name

    def embed(self, texts):
        self.seen.extend(texts)
        return self.inner.embed(texts)


def _settings(hashing_settings, grounded: str):
    section = hashing_settings.embed_assets.model_copy(update={"grounded_vectors": grounded})
    return hashing_settings.model_copy(update={"embed_assets": section})


def test_texts_quoting_one_sentence_have_the_mean_of_it_and_their_other_words(sample_workspace):
    doc_id = "the_lighthouse_key"
    sentences = read_frame(sample_workspace, "sentences", doc_id)
    stored = read_frame(sample_workspace, "embeddings", doc_id)
    sentence_vector = {
        r.unit_id: np.asarray(r.vector) for r in stored[stored["unit_kind"] == "sentence"].itertuples()
    }
    assets = read_frame(sample_workspace, "asset_embeddings", doc_id)
    asset_vector = {(r.unit_kind, r.unit_id): np.asarray(r.vector) for r in assets.itertuples()}
    model, checked = HashingEmbedder(384), 0
    for kind, table, key, column in (
        ("interaction", "interactions", "interaction_id", "description"),
        ("fact", "atomic_facts", "fact_id", "text"),
    ):
        for row in read_frame(sample_workspace, table, doc_id).itertuples():
            inside = sentences[
                (sentences["char_start"] < row.char_end) & (sentences["char_end"] > row.char_start)
            ]
            head, _, quote = getattr(row, column).partition(": “")
            if len(inside) != 1 or quote != f"{inside.iloc[0]['text']}”":
                continue
            sentence = inside.iloc[0]
            words = model.embed([f"{head}:"])[0]
            mean = (
                count_tokens(sentence["text"]) * sentence_vector[sentence["sentence_id"]]
                + count_tokens(f"{head}:") * words
            )
            np.testing.assert_allclose(
                asset_vector[(kind, getattr(row, key))], mean / np.linalg.norm(mean), atol=1e-5
            )
            checked += 1
    assert checked >= 10


def test_the_embedded_setting_embeds_every_text_and_the_default_far_fewer(sample_workspace, hashing_settings):
    doc_id = "the_lighthouse_key"
    seen = {}
    for grounded in ("derived", "embedded"):
        model = Recording()
        ctx = stage_context(
            sample_workspace, "embed_assets", doc_id, _settings(hashing_settings, grounded), model
        )
        rows = embed_assets.run(ctx)["asset_embeddings"].to_pandas()
        seen[grounded] = model.seen
        if grounded == "embedded":
            quoting = rows[rows["unit_kind"].isin(["interaction", "fact", "relation"])]
            np.testing.assert_allclose(
                np.array(quoting["vector"].tolist()), model.inner.embed(quoting["text"].tolist()), atol=1e-6
            )
            assert set(quoting["text"]) <= set(model.seen)
    interactions = set(read_frame(sample_workspace, "interactions", doc_id)["description"])
    assert interactions <= set(seen["embedded"]) and not interactions & set(seen["derived"])
    tokens = {k: sum(count_tokens(t) for t in texts) for k, texts in seen.items()}
    assert tokens["derived"] < tokens["embedded"] / 2
