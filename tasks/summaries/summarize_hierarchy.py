"""summarize_hierarchy: the summary hierarchy of one document, for whole-story questions. Offline it
is extractive and source-grounded: each sentence is scored once (`sentence_salience`), then each
episode, each storyline, the whole work and each community of the entity graph gets the salient
sentences that cover it in story order (`summaries`, one row per summary, and `summary_quotes`, one
row per quoted sentence with its section, chunk and span).

With an LLM the summaries of `[summarize_hierarchy] llm_levels` are then written by the model from
their quotes, every written sentence pointing to the quotes it rests on (`summary_claims`,
tasks.summaries.written_summaries). The stage reads the stored sentence vectors; it needs no embedder.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from schemas.config import SummarizeHierarchySettings
from tasks.summaries.salience import UnitSpan, sentence_salience
from tasks.summaries.written_summaries import write_summaries
from tasks.summaries.summary_rows import (
    DocumentSentences,
    community_reports,
    episode_summaries,
    storyline_summaries,
    work_summary,
)
from tasks.stage import StageContext, StageOutput


def sentence_vectors(sentences: pd.DataFrame, embeddings: pd.DataFrame) -> np.ndarray | None:
    """The sentences' stored vectors in their order (zeros where one is missing), from the model
    that embedded most of them; None without any."""
    rows = embeddings[embeddings["unit_kind"] == "sentence"] if not embeddings.empty else embeddings
    if rows.empty:
        return None
    model = rows["model"].value_counts().sort_index().idxmax()
    rows = rows[rows["model"] == model]
    by_id = dict(zip(rows["unit_id"], rows["vector"]))
    dimension = len(next(iter(by_id.values())))
    matrix = np.zeros((len(sentences), dimension), dtype=np.float32)
    for row, sentence_id in enumerate(sentences["sentence_id"]):
        vector = by_id.get(sentence_id)
        if vector is not None:
            matrix[row] = np.asarray(vector, dtype=np.float32)
    return matrix


def unit_spans(events: pd.DataFrame, interactions: pd.DataFrame, episodes: pd.DataFrame) -> list[UnitSpan]:
    """Events and interactions with a span, each with the episode that grouped it."""
    episode_of = {
        str(u): str(e) for e, units in zip(episodes["episode_id"], episodes["unit_ids"]) for u in units
    }
    spans = []
    for frame, key in ((events, "event_id"), (interactions, "interaction_id")):
        for unit_id, start, end in zip(frame[key], frame["char_start"], frame["char_end"]):
            if pd.notna(start) and pd.notna(end):
                spans.append(UnitSpan(int(start), int(end), episode_of.get(str(unit_id))))
    return spans


def summarize_document(
    doc_id: str,
    title: str,
    language: str,
    tables: dict[str, pd.DataFrame],
    settings: SummarizeHierarchySettings,
) -> StageOutput:
    """`sentence_salience`, `summaries` and `summary_quotes` rows of one document."""
    sentences = tables["sentences"].sort_values(["char_start", "ordinal"]).reset_index(drop=True)
    sections = tables["sections"]
    front = set(sections.loc[sections["section_kind"] == "preamble", "section_id"].astype(str))
    salience = sentence_salience(
        sentences,
        sentence_vectors(sentences, tables["embeddings"]),
        front,
        tables["mentions"],
        tables["entities"],
        unit_spans(tables["events"], tables["interactions"], tables["episodes"]),
        language,
        title,
    )
    doc = DocumentSentences(
        doc_id,
        language,
        sentences,
        salience,
        dict(zip(sections["section_id"].astype(str), sections["ordinal"].astype(int))),
    )
    made = (
        episode_summaries(doc, tables["episodes"], settings.episode_words)
        + storyline_summaries(doc, tables["storylines"], settings.storyline_words)
        + work_summary(doc, title, settings.work_words)
        + community_reports(doc, tables["communities"], tables["mentions"], settings.community_words)
    )
    return {
        "sentence_salience": salience,
        "summaries": [row for row, _ in made],
        "summary_quotes": [quote for _, quotes in made for quote in quotes],
    }


def run(ctx: StageContext) -> StageOutput:
    doc = ctx.document
    output = summarize_document(
        doc.doc_id, doc.title, doc.language, ctx.tables, ctx.settings.summarize_hierarchy
    )
    if ctx.llm is None:
        output["summary_claims"] = []
        return output
    sections = ctx.table("sections")
    headings = {
        str(s): f"[{int(o)}] {h}"
        for s, o, h in zip(sections["section_id"], sections["ordinal"], sections["heading"])
    }
    output.update(write_summaries(ctx, output["summaries"], output["summary_quotes"], headings))
    return output
