"""The query-time tool surface: each tool's channel, argument model (validated, and exported
as a JSON schema for LLM function calling) and function. Every call is timed and traced."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tasks.query.tools import entity_arc, episode_walk
from tasks.query.tools import graph as graph_tools
from tasks.query.tools import narrative as narrative_tools
from tasks.query.tools import summaries as summary_tools
from tasks.query.tools import text as text_tools
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryArgs(Args):
    query: str = Field(
        ..., min_length=1, max_length=500, description="what to look for, in the document's language"
    )
    top_k: int = Field(5, ge=1, le=20)


class SectionArgs(Args):
    query: str = Field("", max_length=500)
    heading: str | None = Field(None, max_length=200, description="words of a scene heading or location")
    ordinal: int | None = Field(None, ge=0, description="scene / section number in story order")
    top_k: int = Field(3, ge=1, le=10)


class FactArgs(QueryArgs):
    entity_ids: list[str] | None = Field(None, max_length=10, description="only facts about these entities")


class SourceArgs(Args):
    chunk_ids: list[str] | None = Field(None, max_length=10)
    section_ids: list[str] | None = Field(None, max_length=5)


class MappingArgs(Args):
    section_ordinal: int | None = Field(None, ge=0)


class EntityLookupArgs(Args):
    entity_id: str | None = None
    name: str | None = Field(None, max_length=200)
    query: str = Field(
        "", max_length=500, description="the question, to rank the entity's facts and relations"
    )


class EntitySearchArgs(QueryArgs):
    entity_types: (
        list[Literal["character", "group", "location", "time", "object", "institution", "role", "concept"]]
        | None
    ) = None


class RelationArgs(QueryArgs):
    entity_ids: list[str] | None = Field(None, max_length=10, description="relations touching these entities")


class EntityArcArgs(Args):
    entity_ids: list[str] = Field(
        ..., min_length=1, max_length=2, description="the one or two characters whose arc is asked"
    )
    query: str = Field(
        ..., min_length=1, max_length=500, description="the question: the moments the arc runs between"
    )
    top_k: int = Field(entity_arc.ARC_ROWS, ge=1, le=8)


class CentralityArgs(Args):
    k: int = Field(8, ge=1, le=30)
    entity_type: str | None = None


class NarrativeSemanticArgs(QueryArgs):
    kinds: list[Literal["event", "interaction", "occasion", "episode", "storyline"]] | None = None


class NarrativeTraceArgs(QueryArgs):
    direction: Literal["before", "after", "cause", "consequence", "trajectory", "any"] = "any"
    hops: int = Field(2, ge=1, le=4)


class EpisodeWalkArgs(QueryArgs):
    clauses: list[str] | None = Field(
        None,
        max_length=4,
        description="the events the question describes, one per item (default: read from the query)",
    )
    direction: Literal["before", "after"] | None = Field(
        None,
        description="where the asked-for episode lies from the described ones (default: read from the query)",
    )
    top_k: int = Field(episode_walk.WALK_ROWS, ge=1, le=episode_walk.WALK_ROWS)


class SummaryArgs(Args):
    query: str = Field(..., min_length=1, max_length=500, description="the whole-story question")
    kind: Literal["work", "character", "relationship", "setting", "theme"] = Field(
        "work", description="work: the plot (the work summary); else what the question is about"
    )
    words: int = Field(200, ge=20, le=2000, description="length of the answer, in words")


class NarrativeSqlArgs(Args):
    query_name: Literal[
        "dialogue_by_speaker",
        "interactions_between",
        "interactions_of",
        "events_with_entity",
        "scene_units",
        "entity_appearances",
    ]
    entity_id: str | None = None
    other_entity_id: str | None = None
    section_ordinal: int | None = Field(None, ge=0)
    limit: int = Field(12, ge=1, le=50)


@dataclass(frozen=True)
class Tool:
    name: str
    channel: str
    args: type[Args]
    call: Callable[[ToolEnv, Args], list[ToolRow]]
    description: str


def _tool(name: str, channel: str, args: type[Args], fn: Callable, **rename: str) -> Tool:
    def call(env: ToolEnv, parsed: Args) -> list[ToolRow]:
        values = parsed.model_dump()
        return fn(env, **{rename.get(k, k): v for k, v in values.items()})

    # The docstring's first paragraph, whole: the model reads it as the tool's description.
    first = (fn.__doc__ or name).strip().split("\n\n")[0]
    return Tool(name, channel, args, call, " ".join(first.split()))


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        _tool("hybrid_evidence_search", "text", QueryArgs, text_tools.hybrid_evidence_search),
        _tool("section_search", "text", SectionArgs, text_tools.section_search),
        _tool("atomic_fact_search", "text", FactArgs, text_tools.atomic_fact_search),
        _tool("vdb_search_sentences", "text", QueryArgs, text_tools.vdb_search_sentences),
        _tool("bm25_search_docs", "text", QueryArgs, text_tools.bm25_search_docs),
        _tool("source_lookup", "text", SourceArgs, text_tools.source_lookup),
        _tool("entity_lookup", "graph", EntityLookupArgs, graph_tools.entity_lookup),
        _tool("entity_search", "graph", EntitySearchArgs, graph_tools.entity_search),
        _tool("relation_search", "graph", RelationArgs, graph_tools.relation_search),
        _tool("top_k_by_centrality", "graph", CentralityArgs, graph_tools.top_k_by_centrality),
        _tool("entity_arc_search", "graph", EntityArcArgs, entity_arc.entity_arc_search),
        _tool(
            "narrative_trace_search", "narrative", NarrativeTraceArgs, narrative_tools.narrative_trace_search
        ),
        _tool(
            "narrative_semantic_search",
            "narrative",
            NarrativeSemanticArgs,
            narrative_tools.narrative_semantic_search,
        ),
        _tool("narrative_sql_search", "narrative", NarrativeSqlArgs, narrative_tools.narrative_sql_search),
        _tool("episode_walk_search", "narrative", EpisodeWalkArgs, episode_walk.episode_walk_search),
        _tool("summary_search", "narrative", SummaryArgs, summary_tools.summary_search),
        _tool("chunk_mapping", "other", MappingArgs, text_tools.chunk_mapping),
    )
}
GRAPH_TOOLS = frozenset(name for name, tool in TOOLS.items() if tool.channel == "graph")


class ToolCallError(ValueError):
    """An unknown tool or arguments that fail validation; reported back, never raised to the user."""


@dataclass
class ToolCall:
    tool: str
    arguments: dict[str, Any]
    round: int
    rows: list[ToolRow]
    ms: float
    error: str | None = None

    def trace(self) -> dict[str, Any]:
        # The kinds of what came back (entity rows add the attribute / profile parts they showed), so
        # qa_traces tells which components reached the evidence.
        kinds = {r.kind for r in self.rows} | {p for r in self.rows for p in r.extra.get("parts", [])}
        return {
            "round": self.round,
            "tool": self.tool,
            "arguments": self.arguments,
            "rows": len(self.rows),
            "kinds": sorted(kinds),
            "tokens": sum(len(r.text.split()) for r in self.rows),
            "ms": round(self.ms, 2),
            "error": self.error,
        }


def function_schemas(allowed: set[str] | None = None) -> list[dict[str, Any]]:
    """OpenAI function-calling `tools` for the allowed tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": tool.description,
                "parameters": tool.args.model_json_schema(),
            },
        }
        for name, tool in TOOLS.items()
        if allowed is None or name in allowed
    ]


def call_tool(
    env: ToolEnv,
    name: str,
    arguments: dict[str, Any] | str,
    round_number: int,
    allowed: set[str] | None = None,
) -> ToolCall:
    """Validate and run one tool call; errors come back inside the ToolCall for the trace."""
    started = time.perf_counter()
    try:
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                raise ToolCallError(f"arguments are not JSON: {exc.msg}") from None
        if not isinstance(arguments, dict):
            raise ToolCallError("arguments must be a JSON object")
        if name not in TOOLS or (allowed is not None and name not in allowed):
            raise ToolCallError(f"unknown or disabled tool {name!r}")
        try:
            parsed = TOOLS[name].args.model_validate(arguments)
        except ValidationError as exc:
            raise ToolCallError(
                f"invalid arguments for {name}: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}"
            ) from None
        rows = TOOLS[name].call(env, parsed)
        return ToolCall(name, dict(arguments), round_number, rows, (time.perf_counter() - started) * 1000)
    except (ToolCallError, ValueError) as exc:
        safe_args = arguments if isinstance(arguments, dict) else {"raw": str(arguments)[:200]}
        return ToolCall(name, safe_args, round_number, [], (time.perf_counter() - started) * 1000, str(exc))
