"""The stage graph, declared once: name, function, tables read and written, version.

The build flow iterates this list per document; ablations and partial rebuilds are list
compositions (`select_stages`). A test checks that every table read is written earlier.
Bump a stage's `version` whenever its output for the same input changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tasks.canonicalize import canonicalize_entities
from tasks.facts import extract_facts
from tasks.graph import extract_graph
from tasks.hierarchy import assemble_episodes, break_cycles, induce_storylines, relate_episodes
from tasks.index import embed_assets, embed_texts, index_terms
from tasks.ingest import ingest_documents, segment_sections, split_chunks, split_sentences
from tasks.narrative import extract_narrative
from tasks.character_states import track_character_states
from tasks.continuity import chain_continuity, judge_continuity, propose_continuity
from tasks.summaries import detect_communities, summarize_hierarchy
from tasks.llm.requests.shapes import COMBINED_PROMPT_ID, grouped_prompts
from tasks.stage import StageContext, StageOutput


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
    reads_input: bool = False  # reads the raw input document itself rather than tables
    # Settings of another section that also shape this stage's output ("section.field")
    reads_settings: tuple[str, ...] = ()

    @property
    def side_writes(self) -> tuple[str, ...]:
        """Tables the stage appends to beside its own, one partition per (document, stage)."""
        return SIDE_TABLES if self.uses_llm else SIDE_TABLES[:1]


# Every stage replaces its `failures` partition; LLM stages also record every request in `llm_calls`.
SIDE_TABLES = ("failures", "llm_calls")


STAGES: tuple[Stage, ...] = (
    Stage(
        "ingest_documents",
        ingest_documents.run,
        reads=(),
        writes=("documents",),
        version="1",
        reads_input=True,
    ),
    Stage(
        "segment_sections",
        segment_sections.run,
        reads=("documents",),
        writes=("sections",),
        version="1",
        config="segment_sections",
    ),
    Stage(
        "split_chunks",
        split_chunks.run,
        reads=("documents", "sections"),
        writes=("chunks",),
        version="2",
        config="split_chunks",
    ),
    Stage(
        "split_sentences",
        split_sentences.run,
        reads=("documents", "sections", "chunks"),
        writes=("sentences",),
        version="2",
    ),
    Stage(
        "index_terms",
        index_terms.run,
        reads=("documents", "chunks", "sentences"),
        writes=("term_postings",),
        version="1",
    ),
    Stage(
        "embed_texts",
        embed_texts.run,
        reads=("documents", "chunks", "sentences"),
        writes=("embeddings",),
        version="1",
        config="embed_texts",
        needs_embedder=True,
    ),
    # Construction (paper §3.1): each LLM stage falls back to its heuristic implementation offline.
    Stage(
        "extract_graph",
        extract_graph.run,
        reads=("documents", "sections", "chunks", "sentences"),
        writes=("raw_entities", "raw_mentions", "raw_relations", "raw_units"),
        version="2",
        config="extract_graph",
        uses_llm=True,
        prompts=(extract_graph.PROMPT_ID, COMBINED_PROMPT_ID),
    ),
    Stage(
        "canonicalize_entities",
        canonicalize_entities.run,
        reads=("documents", "sections", "chunks", "raw_entities", "raw_mentions", "raw_relations"),
        writes=("merge_decisions", "entities", "mentions", "relations"),
        version="2",
        config="canonicalize_entities",
        uses_llm=True,
        prompts=grouped_prompts("canonicalize_entities"),
    ),
    Stage(
        "extract_narrative",
        extract_narrative.run,
        reads=("documents", "sections", "chunks", "sentences", "entities", "mentions", "raw_units"),
        writes=("events", "interactions", "occasions"),
        version="2",
        config="extract_narrative",
        reads_settings=("extract_graph.combined",),  # combined: resolved from raw_units, no request
        uses_llm=True,
        prompts=("extract_narrative/v2",),
    ),
    Stage(
        "extract_facts",
        extract_facts.run,
        reads=(
            "documents",
            "sections",
            "chunks",
            "sentences",
            "entities",
            "mentions",
            "relations",
            "raw_units",
        ),
        writes=("atomic_facts", "entity_attributes", "entity_profiles"),
        version="2",
        config="extract_facts",
        reads_settings=("extract_graph.combined",),  # combined: resolved from raw_units, no request
        uses_llm=True,
        prompts=grouped_prompts("extract_facts"),
    ),
    # Narrative hierarchy (paper §3.2, appendix A.1).
    Stage(
        "assemble_episodes",
        assemble_episodes.run,
        # sentences and their vectors: unit vectors are derived from the sentences units quote
        reads=(
            "documents",
            "sections",
            "sentences",
            "embeddings",
            "entities",
            "events",
            "interactions",
            "occasions",
        ),
        writes=("episodes",),
        version="4",
        config="assemble_episodes",
        needs_embedder=True,
        uses_llm=True,
        prompts=grouped_prompts("assemble_episodes"),
    ),
    Stage(
        "relate_episodes",
        relate_episodes.run,
        # units, sentences and their vectors: episode vectors are derived from their units'
        reads=(
            "documents",
            "sections",
            "sentences",
            "embeddings",
            "entities",
            "relations",
            "events",
            "interactions",
            "occasions",
            "episodes",
        ),
        writes=("episode_links",),
        version="4",
        config="relate_episodes",
        reads_settings=("assemble_episodes.unit_vectors",),
        needs_embedder=True,
        uses_llm=True,
        prompts=grouped_prompts("relate_episodes"),
    ),
    Stage(
        "break_cycles",
        break_cycles.run,
        reads=("documents", "episodes", "episode_links"),
        writes=("episode_relations", "saber_actions"),
        version="2",
        config="break_cycles",
        uses_llm=True,
        prompts=grouped_prompts("break_cycles"),
    ),
    Stage(
        "induce_storylines",
        induce_storylines.run,
        reads=("documents", "sections", "entities", "episodes", "episode_relations"),
        writes=("storylines", "storyline_relations"),
        version="2",
        config="induce_storylines",
        uses_llm=True,
        prompts=grouped_prompts("induce_storylines"),
    ),
    # Summary hierarchy (whole-story questions): communities of the entity graph, then extractive
    # summaries of episodes, storylines, the whole work and the communities.
    Stage(
        "detect_communities",
        detect_communities.run,
        reads=("documents", "sections", "entities", "mentions", "relations"),
        writes=("communities",),
        version="1",
        config="detect_communities",
    ),
    Stage(
        "summarize_hierarchy",
        summarize_hierarchy.run,
        reads=(
            "documents",
            "sections",
            "sentences",
            "embeddings",
            "entities",
            "mentions",
            "events",
            "interactions",
            "episodes",
            "storylines",
            "communities",
        ),
        writes=("sentence_salience", "summaries", "summary_quotes", "summary_claims"),
        version="3",
        config="summarize_hierarchy",
        uses_llm=True,
        prompts=grouped_prompts("summarize_hierarchy"),
    ),
    # Vectors of every asset, for semantic search at query time.
    Stage(
        "embed_assets",
        embed_assets.run,
        reads=(
            "documents",
            "sentences",
            "embeddings",
            "entities",
            "relations",
            "atomic_facts",
            "events",
            "interactions",
            "occasions",
            "episodes",
            "storylines",
        ),
        writes=("asset_embeddings",),
        version="5",
        config="embed_assets",
        needs_embedder=True,
    ),
    # Downstream applications (paper §5, appendix D): production continuity and character states.
    Stage(
        "propose_continuity",
        propose_continuity.run,
        # Candidates come from the scenes' entities (mentions and occasions) and texts only; the
        # scenes' facts are read by the judges that show them, so proposing need not wait for them.
        reads=("documents", "sections", "entities", "mentions", "occasions"),
        writes=("continuity_counts", "continuity_candidates"),
        version="1",
        config="continuity",
    ),
    Stage(
        "judge_continuity",
        judge_continuity.run,
        reads=(
            "documents",
            "sections",
            "entities",
            "mentions",
            "occasions",
            "events",
            "interactions",
            "atomic_facts",
            "continuity_candidates",
        ),
        writes=("continuity_judgments",),
        version="2",
        config="continuity",
        uses_llm=True,
        prompts=grouped_prompts("judge_continuity"),
    ),
    Stage(
        "chain_continuity",
        chain_continuity.run,
        reads=(
            "documents",
            "sections",
            "entities",
            "mentions",
            "occasions",
            "events",
            "interactions",
            "atomic_facts",
            "continuity_judgments",
        ),
        writes=("continuity_chains",),
        version="1",
        config="continuity",
        uses_llm=True,
        prompts=("critique_chain/v1",),
    ),
    Stage(
        "track_character_states",
        track_character_states.run,
        reads=("documents", "sections", "chunks", "entities", "mentions", "occasions", "raw_units"),
        writes=("character_states",),
        version="3",
        config="character_states",
        reads_settings=("extract_graph.combined",),  # combined: the first round from raw_units
        uses_llm=True,
        prompts=grouped_prompts("track_character_states"),
    ),
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


def blocked_by(stages: list[Stage], failed: set[str]) -> dict[str, str]:
    """Stages that cannot run because a stage they read from (directly or not) failed:
    name -> failed stage."""
    writer = {table: stage.name for stage in stages for table in stage.writes}
    blocked: dict[str, str] = {}
    for stage in stages:
        for table in stage.reads:
            source = writer.get(table)
            if source in failed or source in blocked:
                blocked[stage.name] = blocked.get(source, source)
                break
    return blocked
