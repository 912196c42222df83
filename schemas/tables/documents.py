"""Documents and their text units (paper §3.1): documents, sections, chunks and sentences, and
the index tables built over them and over the assets (BM25 postings, text and asset vectors)."""

from __future__ import annotations

from schemas.tables.spec import (
    INT,
    JSON,
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
            ("title", STR, REQUIRED, "Title (from the record, or the first line of the text)"),
            ("language", STR, REQUIRED, "Language code: en or zh"),
            ("kind", STR, REQUIRED, "screenplay or prose (detected unless given)"),
            ("source", STR, REQUIRED, "Where the text came from (path, with #line= for JSONL records)"),
            ("content_sha256", STR, REQUIRED, "sha256 of the document text"),
            ("n_chars", INT, REQUIRED, "Length of the text in characters"),
            ("n_words", INT, "Words (English) or characters (Chinese) in the text"),
            ("encoding", STR, "Text encoding the file was read with"),
            ("meta", JSON,
             "The record's own metadata as JSON (e.g. section_texts, scene_titles, raw_doc_id)"),
            ("text", STR, REQUIRED, "Full document text; all spans index into it"),
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
            ("heading", STR, REQUIRED, "Scene heading or chapter title"),
            ("section_kind", STR, REQUIRED, "scene, chapter, section, paragraphs or preamble"),
            ("scene_number", STR, "Scene number as printed, if any"),
            ("interior", STR, "INT or EXT from a scene heading"),
            ("location", STR, "Location from a scene heading"),
            ("time_of_day", STR, "Time of day from a scene heading (DAY, NIGHT, ...)"),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("text", STR, "Text of the section"),
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
            ("section_id", STR, REQUIRED, "Section the chunk lies in; sections.section_id"),
            ("ordinal", INT, REQUIRED),
            ("text", STR, REQUIRED, "Text of the chunk"),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("n_tokens", INT, REQUIRED, "Length in tokens (the chunker's tokenizer)"),
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
            ("sentence_id", STR, REQUIRED, "Sentence id (content hash)"),
            ("doc_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("text", STR, REQUIRED, "Text of the sentence"),
            ("speaker", STR, "Speaker cue for a dialogue line"),
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
            ("unit_kind", STR, REQUIRED, "chunk or sentence"),
            ("unit_id", STR, REQUIRED, "chunks.chunk_id or sentences.sentence_id"),
            ("term", STR, REQUIRED, "Normalized term (word, or character bigram for Chinese)"),
            ("tf", INT, REQUIRED, "Occurrences of the term in the unit"),
            ("unit_length", INT, REQUIRED, "Length of the unit in terms"),
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
            ("unit_kind", STR, REQUIRED, "chunk or sentence"),
            ("unit_id", STR, REQUIRED, "chunks.chunk_id or sentences.sentence_id"),
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
            ("unit_kind", STR, REQUIRED,
             "entity, relation, fact, event, interaction, occasion, episode or storyline"),
            ("unit_id", STR, REQUIRED),
            ("model", STR, REQUIRED),
            ("text", STR, REQUIRED, "Text that was embedded for the asset"),
            ("vector", VECTOR, REQUIRED),
        ),
        accepted_values={"unit_kind": ASSET_KINDS},
    )
)
