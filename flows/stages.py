"""The stage graph, declared once: name, function, tables read and written, version.

The build flow iterates this list per document; ablations and partial rebuilds are list
compositions (`select_stages`). A test checks that every table read is written earlier.
Bump a stage's `version` whenever its output for the same input changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tasks import embed_texts, index_terms, ingest_documents, segment_sections, split_chunks, split_sentences
from tasks.context import StageContext, StageOutput


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[StageContext], StageOutput]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    version: str
    config: str | None = None  # the settings section that shapes this stage's output
    needs_embedder: bool = False
    uses_llm: bool = False
    prompts: tuple[str, ...] = ()  # prompt ids under tasks/prompts/ (hashed into the fingerprint)


STAGES: tuple[Stage, ...] = (
    Stage("ingest_documents", ingest_documents.run, reads=(), writes=("documents",), version="1"),
    Stage("segment_sections", segment_sections.run, reads=("documents",), writes=("sections",), version="1",
          config="segment_sections"),
    Stage("split_chunks", split_chunks.run, reads=("documents", "sections"), writes=("chunks",), version="2",
          config="split_chunks"),
    Stage("split_sentences", split_sentences.run, reads=("documents", "sections", "chunks"), writes=("sentences",),
          version="2"),
    Stage("index_terms", index_terms.run, reads=("documents", "chunks", "sentences"), writes=("term_postings",),
          version="1"),
    Stage("embed_texts", embed_texts.run, reads=("chunks", "sentences"), writes=("embeddings",), version="1",
          needs_embedder=True),
)

STAGES_BY_NAME = {stage.name: stage for stage in STAGES}


def select_stages(names: list[str] | None = None, until: str | None = None) -> list[Stage]:
    """The stages to run: all, a named subset (in graph order), or all up to and including `until`."""
    stages = list(STAGES)
    if until is not None:
        if until not in STAGES_BY_NAME:
            raise ValueError(f"unknown stage {until!r}; stages: {', '.join(STAGES_BY_NAME)}")
        stages = stages[: [s.name for s in stages].index(until) + 1]
    if names:
        unknown = [n for n in names if n not in STAGES_BY_NAME]
        if unknown:
            raise ValueError(f"unknown stage(s) {', '.join(unknown)}; stages: {', '.join(STAGES_BY_NAME)}")
        stages = [s for s in stages if s.name in names]
    return stages
