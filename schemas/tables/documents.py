"""Documents and their text units (paper §3.1): documents, sections, chunks and sentences, and
the index tables built over them and over the assets (BM25 postings, text and asset vectors)."""

from __future__ import annotations

from schemas.tables.spec import (
    INT,
    SPAN_INVARIANT,
    STR,
    VECTOR,
    ForeignKey,
    REQUIRED,
    TableSpec,
    columns,
    register,
)

ASSET_KINDS = ("entity", "relation", "fact", "event", "interaction", "occasion", "episode", "storyline")

register(
    TableSpec(
        name="documents",
        grain="one row per ingested document",
        key=("doc_id",),
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("title", STR, REQUIRED),
            ("language", STR, REQUIRED),
            ("kind", STR, REQUIRED),
            ("source", STR, REQUIRED),
            ("content_sha256", STR, REQUIRED),
            ("n_chars", INT, REQUIRED),
            ("n_words", INT),
            ("encoding", STR),
            ("meta_json", STR),
            ("text", STR, REQUIRED),
        ),
        accepted_values={"language": ("en", "zh"), "kind": ("screenplay", "prose")},
    )
)


register(
    TableSpec(
        name="sections",
        grain="one row per scene (screenplay) or chapter / section / paragraph group (prose)",
        key=("section_id",),
        fields=columns(
            ("section_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("heading", STR, REQUIRED),
            ("section_kind", STR, REQUIRED),
            ("scene_number", STR),
            ("interior", STR),
            ("location", STR),
            ("time_of_day", STR),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("text", STR),
        ),
        accepted_values={"section_kind": ("scene", "chapter", "section", "paragraphs", "preamble")},
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="chunks",
        grain="one row per retrieval chunk (about 600 tokens, inside one section)",
        key=("chunk_id",),
        fields=columns(
            ("chunk_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("text", STR, REQUIRED),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("n_tokens", INT, REQUIRED),
        ),
        foreign_keys=(ForeignKey("section_id", "sections", "section_id", nullable=False),),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="sentences",
        grain="one row per sentence (dialogue sentences carry their speaker cue)",
        key=("sentence_id",),
        fields=columns(
            ("sentence_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("text", STR, REQUIRED),
            ("speaker", STR),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
        ),
        foreign_keys=(
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
            ForeignKey("section_id", "sections", "section_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="term_postings",
        grain="one row per (unit, term): the BM25 inverted index over chunks and sentences",
        key=("unit_kind", "unit_id", "term"),
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("unit_kind", STR, REQUIRED),
            ("unit_id", STR, REQUIRED),
            ("term", STR, REQUIRED),
            ("tf", INT, REQUIRED),
            ("unit_length", INT, REQUIRED),
        ),
        accepted_values={"unit_kind": ("chunk", "sentence")},
    )
)


register(
    TableSpec(
        name="embeddings",
        grain="one row per embedded unit (chunk or sentence) and embedding model",
        key=("unit_kind", "unit_id", "model"),
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("unit_kind", STR, REQUIRED),
            ("unit_id", STR, REQUIRED),
            ("model", STR, REQUIRED),
            ("vector", VECTOR, REQUIRED),
        ),
        accepted_values={"unit_kind": ("chunk", "sentence")},
    )
)


register(
    TableSpec(
        name="asset_embeddings",
        grain=(
            "one row per embedded narrative asset (entity, relation, fact, unit, episode, storyline) "
            "and model"
        ),
        key=("unit_kind", "unit_id", "model"),
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("unit_kind", STR, REQUIRED),
            ("unit_id", STR, REQUIRED),
            ("model", STR, REQUIRED),
            ("text", STR, REQUIRED),
            ("vector", VECTOR, REQUIRED),
        ),
        accepted_values={"unit_kind": ASSET_KINDS},
    )
)
