"""Typed configuration: one section per stage, loaded from TOML and command-line overrides.

Tasks never read environment variables; the only environment lookup is the API key, done
in `flows.cli.main` when the LLM client is built.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from schemas.config_llm import REMOVED_LLM_SETTINGS, LLMSettings, LocalLLMSettings  # noqa: F401
from schemas.config_query import AnswerSettings, EvaluateSettings, RetrievalSettings, SqlSettings
from schemas.config_section import Section, check_url
from schemas.ids import stable_hash
from schemas.responses.combined import capped_extraction

MAX_CONFIG_BYTES = 4 * 2**20


class BuildSettings(Section):
    concurrency: int = Field(2, ge=1, le=64, description="documents built at the same time")
    stage_concurrency: int = Field(
        4, ge=1, le=32, description="independent stages of one document run at the same time (1: in order)"
    )
    max_document_chars: int = Field(
        20_000_000, ge=1, le=500_000_000, description="larger inputs are refused with a failures row"
    )


class SegmentSectionsSettings(Section):
    paragraph_group_tokens: int = Field(
        900, ge=50, description="prose without chapters: target tokens per section"
    )


class SplitChunksSettings(Section):
    chunk_tokens: int = Field(600, ge=50, description="target tokens per chunk (chunks never cross sections)")


class EmbedTextsSettings(Section):
    backend: Literal["minilm", "http", "hashing"] = "minilm"
    model: str = "all-MiniLM-L6-v2"
    url: str | None = Field(None, description="OpenAI-compatible /v1/embeddings base URL (backend http)")

    _url = field_validator("url")(classmethod(lambda cls, value: check_url(value)))
    batch_size: int = Field(64, ge=1)
    dimensions: int = Field(384, ge=8, description="vector size of the hashing backend")
    chunk_vectors: Literal["embedded", "sentences"] = Field(
        "sentences",
        description="sentences: a chunk's vector is the token-weighted mean of its sentences' vectors "
        "(half the tokens); embedded: each chunk's text is embedded (see README, Cost)",
    )


class EmbedAssetsSettings(Section):
    hierarchy_vectors: Literal["derived", "embedded"] = Field(
        "derived",
        description="derived: an episode's vector is the token-weighted mean of its units' vectors, a "
        "storyline's of its episodes' (fewer tokens); embedded: both are embedded from their text "
        "(see README, Cost)",
    )
    grounded_vectors: Literal["derived", "embedded"] = Field(
        "derived",
        description="derived: an event, interaction, fact or relation whose text quotes source sentences "
        "(found among those of its span or chunks) gets the token-weighted mean of those sentences' "
        "vectors and of its remaining words' vector; embedded: its whole text is embedded (see README, Cost)",
    )


class ExtractGraphSettings(Section):
    gleaning: bool = Field(False, description="LLM: ask once more per chunk for entities/relations it missed")
    pack_tokens: int = Field(
        1500,
        ge=0,
        description="LLM: consecutive chunks share one request up to this many "
        "source tokens (instructions sent once, not per scene); 0 = one request per chunk",
    )
    combined: bool = Field(
        True,
        description="LLM: one request per pack asks for entities, relations, narrative units and facts "
        "at once (the source is sent once); extract_narrative and extract_facts then resolve the "
        "reply's names without calling the LLM. false = three separate passes",
    )
    combined_pack_tokens: int = Field(
        3000, ge=0, description="LLM, combined: source tokens per request; 0 = one request per chunk"
    )
    min_prose_name_count: int = Field(
        2, ge=1, description="offline prose: mentions a capitalised name needs to count"
    )
    max_description_chars: int = Field(600, ge=80, description="longer merged descriptions are compacted")
    max_items: dict[str, Annotated[int, Field(ge=1, le=10_000)]] = Field(
        default_factory=dict,
        description="LLM, combined: at most this many items per reply list and request, e.g. "
        "{entities = 3, events = 3}; in the schema, so a small model that writes until its limit "
        "still reaches every list, and the reply limit holds them. Empty = the schema's bounds",
    )

    @field_validator("max_items")
    @classmethod
    def _known_lists(cls, value: dict[str, int]) -> dict[str, int]:
        capped_extraction(value)  # names every list it caps, or a one-line error
        return value


class CanonicalizeEntitiesSettings(Section):
    enabled: bool = Field(True, description="graph refinement on/off (a paper ablation)")
    name_similarity: float = Field(
        0.88,
        ge=0,
        le=1,
        description="string similarity at which two names are spelling "
        "variants (full names with one given name; non-character entities)",
    )
    max_candidates_per_entity: int = Field(8, ge=1, description="blocking bound: no all-pairs comparisons")
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: open pairs share one request while their records fit this budget"
    )
    max_pairs_per_request: int = Field(64, ge=1, description="LLM: pairs judged in one request")
    max_description_chars: int = Field(
        600, ge=80, description="merged descriptions of a canonical entity are compacted"
    )


class ExtractNarrativeSettings(Section):
    max_events_per_chunk: int = Field(40, ge=1)
    pack_tokens: int = Field(
        1500,
        ge=0,
        description="LLM: consecutive chunks share one request up to this many source tokens; "
        "0 = one request per chunk",
    )


class ExtractFactsSettings(Section):
    enabled: bool = Field(True, description="atomic facts, attributes and profiles on/off (a paper ablation)")
    min_degree: int = Field(2, ge=0, description="entities of at least this graph degree are profiled")
    max_chunks_per_entity: int = Field(12, ge=1, description="linked chunks revisited per entity")
    max_facts_per_entity: int = Field(60, ge=1)
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: entities share one request while their linked chunks fit this budget"
    )
    max_entities_per_request: int = Field(20, ge=1, description="LLM: entities answered in one request")


class AssembleEpisodesSettings(Section):
    min_coherence: float = Field(
        0.35, ge=0, le=1, description="a unit joins an episode at or above this coherence"
    )
    max_section_gap: int = Field(3, ge=0, description="sections an episode may skip and still continue")
    scene_bounded: bool = Field(
        True,
        description="screenplays: an episode stays inside one scene (a scene may hold several), so an "
        "episode names the scene it happened in; prose keeps max_section_gap",
    )
    max_units_per_episode: int = Field(40, ge=1)
    max_open_episodes: int = Field(
        8, ge=1, description="recent episodes a unit is scored against: bounds work per unit"
    )
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: episodes described in one request while their units fit this budget"
    )
    max_per_request: int = Field(32, ge=1, description="LLM: episodes described in one request")
    unit_vectors: Literal["derived", "embedded"] = Field(
        "derived",
        description="semantic coherence signal. derived: a unit whose description quotes the source "
        "sentences of its span gets the token-weighted mean of their vectors and of its remaining "
        "words' vector; embedded: every unit description is embedded (see README, Cost)",
    )


class RelateEpisodesSettings(Section):
    window: int = Field(6, ge=1, description="later episodes considered by source order for each episode")
    max_candidates_per_episode: int = Field(10, ge=1, description="bounds candidate pairs: never quadratic")
    min_confidence: float = Field(0.3, ge=0, le=1)
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: candidate pairs share one request while their episodes fit this budget"
    )
    max_pairs_per_request: int = Field(64, ge=1, description="LLM: candidate pairs judged in one request")
    episode_vectors: Literal["units", "embedded"] = Field(
        "units",
        description="embedding signal of candidate pairs. units: an episode's vector is the "
        "token-weighted mean of its units' vectors (as [assemble_episodes] unit_vectors makes them); "
        "embedded: its title, summary and goal are embedded (see README, Cost)",
    )


class BreakCyclesSettings(Section):
    mode: Literal["raw", "heuristic", "saber"] = "saber"
    causes_weight: float = Field(1.0, ge=0, le=100)
    precedes_weight: float = Field(0.7, ge=0, le=100)
    elaborates_weight: float = Field(0.35, ge=0, le=100)
    max_adjudications: int = Field(200, ge=0, description="shortcut questions sent to the LLM per document")
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: questions share one request while their episodes fit this budget"
    )
    max_per_request: int = Field(64, ge=1, description="LLM: shortcut questions judged in one request")
    max_path_hops: int = Field(
        3, ge=2, description="longest indirect path (in hops) that can cover a direct edge"
    )


class InduceStorylinesSettings(Section):
    max_depth: int = Field(12, ge=1)
    max_paths: int = Field(2000, ge=1)
    max_chain_length: int = Field(8, ge=2, description="L: longer chains are split")
    max_overlap: float = Field(0.5, ge=0, le=1, description="rho: overlap allowed with a selected storyline")
    min_new_episodes: int = Field(2, ge=1, description="m: new episodes a storyline must contribute")
    max_storylines: int = Field(15, ge=1)
    pack_tokens: int = Field(
        5000, ge=0, description="LLM: storylines share one request while their episodes fit this budget"
    )
    max_per_request: int = Field(16, ge=1, description="LLM: storylines described in one request")


class DetectCommunitiesSettings(Section):
    """Communities of the entity graph (Louvain over the canonical relations)."""

    seed: int = Field(7, description="Louvain's random seed: a rebuild gives the same communities")
    resolution: float = Field(
        1.0, gt=0, le=10, description="Louvain resolution (higher: smaller communities)"
    )
    max_communities: int = Field(12, ge=1, le=200, description="largest communities kept, by mentions")


class SummarizeHierarchySettings(Section):
    """Summaries: the words each level's quotes add up to, at least; with an LLM, the levels it writes."""

    episode_words: int = Field(60, ge=5, description="words quoted for each episode")
    storyline_words: int = Field(150, ge=10, description="words quoted for each storyline")
    work_words: int = Field(
        600, ge=20, description="words quoted for the whole work (an answer takes its first quotes by rank)"
    )
    community_words: int = Field(120, ge=10, description="words quoted for each community report")
    llm_levels: list[Literal["work", "storyline", "community", "episode"]] = Field(
        default_factory=lambda: ["work", "storyline", "community"],
        description="LLM: the levels whose summaries the model writes from their quotes (the others "
        "stay extractive)",
    )
    pack_tokens: int = Field(
        5000, ge=0, description="LLM: summaries share one request while their quotes fit this budget"
    )
    max_per_request: int = Field(8, ge=1, le=64, description="LLM: summaries written in one request")


class ContinuitySettings(Section):
    max_entity_share: float = Field(
        0.25,
        ge=0,
        le=1,
        description="characters/objects in more than this "
        "share of scenes do not make a candidate alone (0 = every entity does)",
    )
    max_distance: int = Field(0, ge=0, description="script-order prior k: pairs <= k scenes apart (0 = any)")
    min_similarity: float = Field(0.0, ge=0, le=1, description="scene-text similarity prior (0 = off)")
    max_candidates: int = Field(5000, ge=1, description="LLM judgments per document: closest pairs first")
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: pairs share one request while their scene packets fit this budget"
    )
    max_candidates_per_request: int = Field(
        32, ge=1, le=64, description="LLM: candidate pairs judged in one request"
    )
    min_confidence: float = Field(0.5, ge=0, le=1, description="judged edges this sure enter the graph")
    chains: Literal["components", "cliques"] = Field("components", description="preliminary chains")


class CharacterStatesSettings(Section):
    max_rounds: int = Field(3, ge=1, le=6, description="extract -> critic -> revise rounds per scene (LLM)")
    critic: bool = Field(
        True,
        description="LLM: a critic reads each scene's states (a second reading of the scene); off, states "
        "are written once and left unreviewed (accepted false)",
    )
    max_characters_per_scene: int = Field(8, ge=1, description="candidate characters per scene")
    max_states_per_character: int = Field(4, ge=1)
    pack_tokens: int = Field(
        6000, ge=0, description="LLM: scenes share one extract or critic request while they fit this budget"
    )
    max_scenes_per_request: int = Field(16, ge=1, le=64, description="LLM: scenes in one request")


class Settings(Section):
    build: BuildSettings = BuildSettings()
    segment_sections: SegmentSectionsSettings = SegmentSectionsSettings()
    split_chunks: SplitChunksSettings = SplitChunksSettings()
    embed_texts: EmbedTextsSettings = EmbedTextsSettings()
    embed_assets: EmbedAssetsSettings = EmbedAssetsSettings()
    llm: LLMSettings = LLMSettings()
    local_llm: LocalLLMSettings = LocalLLMSettings()
    extract_graph: ExtractGraphSettings = ExtractGraphSettings()
    canonicalize_entities: CanonicalizeEntitiesSettings = CanonicalizeEntitiesSettings()
    extract_narrative: ExtractNarrativeSettings = ExtractNarrativeSettings()
    extract_facts: ExtractFactsSettings = ExtractFactsSettings()
    assemble_episodes: AssembleEpisodesSettings = AssembleEpisodesSettings()
    relate_episodes: RelateEpisodesSettings = RelateEpisodesSettings()
    break_cycles: BreakCyclesSettings = BreakCyclesSettings()
    induce_storylines: InduceStorylinesSettings = InduceStorylinesSettings()
    detect_communities: DetectCommunitiesSettings = DetectCommunitiesSettings()
    summarize_hierarchy: SummarizeHierarchySettings = SummarizeHierarchySettings()
    continuity: ContinuitySettings = ContinuitySettings()
    character_states: CharacterStatesSettings = CharacterStatesSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    answer: AnswerSettings = AnswerSettings()
    sql: SqlSettings = SqlSettings()
    evaluate: EvaluateSettings = EvaluateSettings()

    def section_hash(self, name: str) -> str:
        """Hash of one config section: part of a stage's fingerprint."""
        section = getattr(self, name, None)
        return stable_hash(name, section.model_dump(mode="json") if section is not None else None)


def load_settings(path: Path | None = None, overrides: dict[str, dict[str, Any]] | None = None) -> Settings:
    """Settings from an optional TOML file, then per-section overrides (None values ignored)."""
    data: dict[str, dict[str, Any]] = {}
    if path is not None:
        info = os.stat(path)  # a FIFO or a device is refused from stat, never opened (it could block)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"config file {path} is not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ValueError(f"config file larger than {MAX_CONFIG_BYTES // 2**20} MiB: {path}")
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    for section, values in (overrides or {}).items():
        merged = dict(data.get(section, {}))
        merged.update({k: v for k, v in values.items() if v is not None})
        data[section] = merged
    return Settings.model_validate(data)
