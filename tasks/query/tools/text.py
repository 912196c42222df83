"""Text-channel tools: source passages, sentences, sections and atomic facts."""

from __future__ import annotations

from tasks.query.hybrid.retrieve import hybrid_search
from tasks.query.store.ranking import top_positions
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow, provenance
from tasks.tables.io import as_list


def _chunk_row(env: ToolEnv, position: int, score: float, channel: str = "text") -> ToolRow:
    chunk = env.store.source.chunk_rows[position]
    return ToolRow(
        "chunk",
        chunk["chunk_id"],
        chunk["text"],
        round(float(score), 6),
        channel,
        env.store.doc_id,
        **provenance(env.store, [chunk["chunk_id"]], span=(int(chunk["char_start"]), int(chunk["char_end"]))),
        extra={"n_tokens": int(chunk["n_tokens"])},
    )


def hybrid_evidence_search(env: ToolEnv, query: str, top_k: int = 5) -> list[ToolRow]:
    """Source chunks by lexical (BM25) and semantic recall fused by reciprocal rank."""
    ranked = hybrid_search(
        env.store.source, query, env.vector(query), top_k, 40, 60, env.dense_chunk_score
    )
    return [_chunk_row(env, r.position, r.score) for r in ranked]


def bm25_search_docs(env: ToolEnv, query: str, top_k: int = 5) -> list[ToolRow]:
    """Source chunks with exact or rare surface terms (BM25 only)."""
    scores = env.store.source.chunk_bm25.scores(query)
    return [_chunk_row(env, p, scores[p]) for p in top_positions(scores, top_k) if scores[p] > 0]


def vdb_search_sentences(env: ToolEnv, query: str, top_k: int = 8) -> list[ToolRow]:
    """Single sentences by semantic similarity: paraphrased local facts and implications."""
    source = env.store.source
    vector = env.vector(query)
    if vector is None or source.sentence_vectors.shape[1] != vector.shape[-1]:
        scores = source.sentence_bm25.scores(query)
    else:
        scores = source.sentence_vectors @ vector
    rows = []
    for position in top_positions(scores, top_k):
        sentence = source.sentence_rows[position]
        speaker = sentence["speaker"]
        text = f"{speaker}: {sentence['text']}" if isinstance(speaker, str) and speaker else sentence["text"]
        rows.append(
            ToolRow(
                "sentence",
                sentence["sentence_id"],
                text,
                round(float(scores[position]), 6),
                "text",
                env.store.doc_id,
                **provenance(
                    env.store,
                    [sentence["chunk_id"]],
                    sentence["section_id"],
                    (int(sentence["char_start"]), int(sentence["char_end"])),
                ),
            )
        )
    return rows


def section_search(
    env: ToolEnv, query: str = "", heading: str | None = None, ordinal: int | None = None, top_k: int = 3
) -> list[ToolRow]:
    """Sections (scenes or chapters) by ordinal, by heading/location words, or by content."""
    sections = env.store.source.sections
    if ordinal is not None:
        chosen = sections[sections["ordinal"] == ordinal]
        scored = [(row, 1.0) for row in chosen.to_dict("records")]
    else:
        probe = (heading or query).lower()
        words = [w for w in probe.split() if len(w) > 2]
        scored = []
        for row in env.store.source.section_rows:
            title = f"{row['heading']} {row['location'] or ''}".lower()
            hits = sum(1 for w in words if w in title)
            if hits:
                scored.append((row, hits / max(1, len(words))))
        if not scored and query:
            # No heading matches: rank sections by their best chunk.
            best: dict[str, float] = {}
            for row in hybrid_evidence_search(env, query, top_k * 2):
                best[row.section_id] = max(best.get(row.section_id, 0.0), row.score)
            scored = [(env.store.sections_by_id[s], v) for s, v in best.items()]
        scored.sort(key=lambda item: (-item[1], item[0]["ordinal"]))
    rows = []
    for row, score in scored[:top_k]:
        chunk_ids = list(env.store.source.chunk_ids_of_section.get(row["section_id"], []))
        rows.append(
            ToolRow(
                "section",
                row["section_id"],
                row["text"] or "",
                round(float(score), 6),
                "text",
                env.store.doc_id,
                **provenance(
                    env.store, chunk_ids, row["section_id"], (int(row["char_start"]), int(row["char_end"]))
                ),
                extra={"location": row["location"], "time_of_day": row["time_of_day"]},
            )
        )
    return rows


def atomic_fact_search(
    env: ToolEnv, query: str, entity_ids: list[str] | None = None, top_k: int = 8
) -> list[ToolRow]:
    (  # a single line on purpose: the tool's description is the docstring's first line
        "Compact source-grounded propositions (states, actions, goals, causes), "
        "optionally about given entities."
    )
    index = env.store.asset("fact")
    facts = env.store.table("atomic_facts")
    if index is None or facts.empty:
        return []
    of_entity = env.store.facts_of_entity
    allowed = set().union(*(of_entity.get(e, set()) for e in entity_ids)) if entity_ids else None
    by_id = env.store.facts_by_id
    rows = []
    for fact_id, score in index.search(query, env.vector(query), top_k, allowed):
        fact = by_id[fact_id]
        rows.append(
            ToolRow(
                "fact",
                fact_id,
                fact["text"],
                round(score, 6),
                "text",
                env.store.doc_id,
                **provenance(
                    env.store,
                    [fact["chunk_id"]],
                    fact["section_id"],
                    (int(fact["char_start"]), int(fact["char_end"])),
                ),
                entity_ids=(fact["entity_id"], *as_list(fact["related_entity_ids"])),
                extra={"fact_type": fact["fact_type"]},
            )
        )
    return rows


def source_lookup(
    env: ToolEnv, chunk_ids: list[str] | None = None, section_ids: list[str] | None = None
) -> list[ToolRow]:
    """Original source passages for chunk or section ids returned by another tool."""
    rows = []
    for chunk_id in chunk_ids or []:
        position = env.store.chunk_position.get(chunk_id)
        if position is not None:
            rows.append(_chunk_row(env, position, 1.0))
    for section_id in section_ids or []:
        for chunk_id in env.store.source.chunks.loc[
            env.store.source.chunks["section_id"] == section_id, "chunk_id"
        ]:
            rows.append(_chunk_row(env, env.store.chunk_position[chunk_id], 1.0))
    return rows


def chunk_mapping(env: ToolEnv, section_ordinal: int | None = None) -> list[ToolRow]:
    """Document-to-chunk mapping: the chunk ids (and count) of the document or of one section."""
    chunks = env.store.source.chunks
    if section_ordinal is not None:
        section_ids = env.store.source.sections.loc[
            env.store.source.sections["ordinal"] == section_ordinal, "section_id"
        ]
        chunks = chunks[chunks["section_id"].isin(section_ids)]
    listing = ", ".join(chunks["chunk_id"].tolist()[:50])
    text = f"{env.store.source.title}: {len(chunks)} chunks. {listing}"
    return [
        ToolRow(
            "mapping",
            env.store.doc_id,
            text,
            1.0,
            "other",
            env.store.doc_id,
            extra={"n_chunks": int(len(chunks)), "chunk_ids": chunks["chunk_id"].tolist()},
        )
    ]
