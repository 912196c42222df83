"""The texts embed_assets embeds: an entity's aliases without the case variants of its name, a relation
without the names in front that its description already says."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tasks.index.embed_assets import asset_texts


def _entities(name: str, aliases: list[str]) -> dict[str, pd.DataFrame]:
    return {
        "entities": pd.DataFrame(
            {
                "entity_id": ["ent-1"],
                "name": [name],
                "entity_type": ["location"],
                "description": ["Scene location: LAKE IN FOREST."],
                "aliases": [np.array(aliases, dtype=object)],  # as read back from Parquet
            }
        )
    }


def test_aliases_that_only_change_the_names_letter_case_are_left_out():
    aliases = ["LAKE IN FOREST", "Lake in forest", "The Lake", "THE LAKE"]
    texts = asset_texts(_entities("Lake In Forest", aliases))
    expected = "Lake In Forest (location). Scene location: LAKE IN FOREST. Also called The Lake."
    assert texts == [("entity", "ent-1", expected)]


def test_an_entity_whose_aliases_are_all_case_variants_has_no_also_called():
    texts = asset_texts(_entities("Lake In Forest", ["LAKE IN FOREST", "lake in forest"]))
    assert texts[0][2] == "Lake In Forest (location). Scene location: LAKE IN FOREST."


def _relation(description: str) -> dict[str, pd.DataFrame]:
    return {
        "entities": pd.DataFrame(
            {
                "entity_id": ["ent-1", "ent-2"],
                "name": ["Nadia", "Kitchen"],
                "entity_type": ["character", "location"],
                "description": ["", ""],
                "aliases": [np.array([], dtype=object)] * 2,
            }
        ),
        "relations": pd.DataFrame(
            {
                "relation_id": ["rel-1"],
                "source_entity_id": ["ent-1"],
                "target_entity_id": ["ent-2"],
                "description": [description],
                "keywords": [np.array(["setting"], dtype=object)],
            }
        ),
    }


def test_a_relation_whose_description_names_both_ends_is_not_prefixed_with_them():
    texts = {kind: text for kind, _, text in asset_texts(_relation("Nadia appears at the kitchen (23)"))}
    assert texts["relation"] == "Nadia appears at the kitchen (23) setting"


def test_a_relation_whose_description_leaves_an_end_out_keeps_the_names():
    texts = {kind: text for kind, _, text in asset_texts(_relation("She cooks there."))}
    assert texts["relation"] == "Nadia — Kitchen : She cooks there. setting"
