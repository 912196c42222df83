"""`nkw build --dry-run`: estimate LLM calls and tokens per stage from the inputs' chunk
counts, without writing anything or calling a server.

Segmentation is computed in memory with the same pure functions the build uses; the later
counts (entities, episodes, candidate pairs) are not known before extraction, so they are
estimated with the ratios below, which are printed with the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from flows.build.dry_run_built import built_estimate
from flows.build.dry_run_downstream import STATE_ROUNDS_PER_SCENE
from flows.stages import Stage
from schemas.config import Settings
from tasks.graph.extract_graph import PROMPT_ID as GRAPH_PROMPT_ID
from tasks.ingest.scan import scan_inputs
from tasks.ingest.segment_sections import segment
from tasks.ingest.split_chunks import chunks_for_document
from tasks.llm.requests.chunk_packs import ends_pack
from tasks.llm.requests.prompts import PROMPTS_DIR
from tasks.llm.requests.shapes import COMBINED_PROMPT_ID
from tasks.tables.io import Workspace, read_frame
from tasks.text import count_tokens

# Ratios observed on screenplays and stories with the embedded extractors; stated in the output.
ASSUMPTIONS = {
    "entities_per_chunk": 3.0,
    "profiled_share_of_entities": 0.35,
    "ambiguous_share_of_entities": 0.1,
    "episodes_per_section": 0.6,
    "completion_per_chunk_token": 0.6,
    "shortcut_share_of_pairs": 0.3,
    "candidate_share_of_scene_pairs": 0.15,  # 0.035-0.20 measured on the STAGE dev screenplays
    "chains_per_section": 0.4,
    "state_rounds_per_section": STATE_ROUNDS_PER_SCENE,
    "observable_share": 0.6,  # of a scene's text, the lines a states request shows (0.57 on the samples)
    "relate_pair_tokens": 30,  # a candidate pair's line and its share of the episode lines
    "continuity_tokens_per_pair": 300,  # its line and its share of the scene packets (about 300 measured)
    "episode_block_tokens": 200,  # an episode's unit lines in an assemble request
    "shortcut_question_tokens": 50,  # a shortcut question and its share of the episode lines
    "storyline_tokens": 400,  # a storyline's episodes and signals in an induce request
}
STATE_SCENE_EXTRA_TOKENS = 30  # a scene block's number, heading, characters and notes beside its text


# With `[extract_graph] combined`, these stages resolve the combined replies and send nothing.
RESOLVED_FROM_COMBINED = ("extract_narrative", "extract_facts")
COMBINED_HEADER_TOKENS = 110  # title, known characters and section headings of a combined request


@dataclass(frozen=True)
class Corpus:
    documents: int
    sections: int
    chunks: int
    chunk_tokens: int
    built: dict[str, int] | None = None  # item counts of a previous build of these documents, when one exists
    graph_requests: int = 0  # extract_graph requests: consecutive chunks packed up to the token budget
    narrative_requests: int = 0  # extract_narrative requests, packed the same way
    doc_ids: tuple[str, ...] = ()


def built_counts(workspace: Workspace | None, doc_ids: list[str]) -> dict[str, int] | None:
    """Entities and episodes a previous build of these documents produced (None when it has none)."""
    if workspace is None or not workspace.tables_dir.is_dir():
        return None
    counts = {}
    for table in ("entities", "episodes"):
        frame = read_frame(workspace, table)
        if frame.empty or "doc_id" not in frame:
            return None
        counts[table] = int(frame["doc_id"].isin(doc_ids).sum())
    return counts if all(counts.values()) else None


def measure_corpus(
    paths: list[str], settings: Settings, workspace: Workspace | None = None
) -> tuple[Corpus, list[str]]:
    """Counts after segmentation, computed in memory; and the inputs that could not be read."""
    sections = chunks = tokens = documents = graph_requests = narrative_requests = 0
    problems = []
    doc_ids = []
    # One document in memory at a time, whatever the corpus size.
    for item in scan_inputs(paths, max_chars=settings.build.max_document_chars):
        if item.failure is not None:
            problems.append(f"{item.failure.source}: {item.failure.error}")
        if item.document is None:
            continue
        document = item.document
        documents += 1
        doc_ids.append(document.doc_id)
        rows, _ = segment(
            document.doc_id,
            document.text,
            document.language,
            document.kind,
            section_texts=document.meta.get("section_texts"),
            paragraph_group_tokens=settings.segment_sections.paragraph_group_tokens,
        )
        chunk_rows = chunks_for_document(
            document.doc_id,
            document.text,
            document.language,
            document.kind,
            pd.DataFrame(rows),
            settings.split_chunks.chunk_tokens,
        )
        sections += len(rows)
        chunks += len(chunk_rows)
        tokens += sum(r["n_tokens"] for r in chunk_rows)
        sizes = [int(r["n_tokens"]) for r in chunk_rows]
        texts = [str(r["text"]) for r in chunk_rows]
        graph_requests += packed_requests(sizes, graph_pack_tokens(settings), texts)
        narrative_requests += packed_requests(sizes, settings.extract_narrative.pack_tokens, texts)
    built = built_counts(workspace, doc_ids)
    corpus = Corpus(
        documents, sections, chunks, tokens, built, graph_requests, narrative_requests, tuple(doc_ids)
    )
    return corpus, problems


def packed_requests(chunk_tokens: list[int], budget: int, texts: list[str] | None = None) -> int:
    """How many requests consecutive chunks make when packed up to `budget` tokens (with their
    `texts`, also at the content-defined boundaries tasks.graph.packing cuts at)."""
    requests, used, cut = 0, 0, False
    for k, tokens in enumerate(chunk_tokens):
        if requests == 0 or budget <= 0 or cut or used + tokens > budget:
            requests, used = requests + 1, 0
        used += tokens
        cut = texts is not None and ends_pack(texts[k], tokens, budget)
    return requests


def graph_pack_tokens(settings: Settings) -> int:
    """The source-token budget of one extract_graph request (combined or graph-only)."""
    graph = settings.extract_graph
    return graph.combined_pack_tokens if graph.combined else graph.pack_tokens


def active_prompts(stage: Stage, settings: Settings) -> tuple[str, ...]:
    """The prompts a stage's first round sends under these settings (extract_graph declares both
    its graph-only and its combined prompt, and sends one of them)."""
    if stage.name != "extract_graph":
        return stage.prompts
    return (COMBINED_PROMPT_ID,) if settings.extract_graph.combined else (GRAPH_PROMPT_ID,)


def _prompt_tokens(prompt_id: str) -> int:
    name, _, version = prompt_id.partition("/")
    path = PROMPTS_DIR / name / f"{version}.md"
    return count_tokens(path.read_text(encoding="utf-8")) if path.is_file() else 0


def _template_tokens(stage: Stage, settings: Settings | None = None) -> int:
    prompts = active_prompts(stage, settings) if settings is not None else stage.prompts
    return sum(_prompt_tokens(prompt_id) for prompt_id in prompts)


def estimate_stage(
    stage: Stage, corpus: Corpus, settings: Settings, workspace: Workspace | None = None
) -> dict[str, Any]:
    """(calls, prompt tokens, completion tokens) expected for one LLM stage over the corpus: from a
    previous build's items where the workspace has one (grouped as the stage groups them), else
    from the ratios in ASSUMPTIONS."""
    a = ASSUMPTIONS
    if stage.name in RESOLVED_FROM_COMBINED and settings.extract_graph.combined:  # no request of their own
        return {"stage": stage.name, "calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    built = (
        built_estimate(
            stage.name, workspace, list(corpus.doc_ids), settings, _template_tokens(stage, settings)
        )
        if corpus.built
        else None
    )
    if built is not None:
        calls, prompt_tokens = built
        per_call = prompt_tokens / max(1, calls)
        return {
            "stage": stage.name,
            "calls": calls,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": int(calls * max(60, per_call * a["completion_per_chunk_token"])),
            "from": "previous build",
        }
    chunk = corpus.chunk_tokens / max(1, corpus.chunks)
    entities = corpus.built["entities"] if corpus.built else corpus.chunks * a["entities_per_chunk"]
    episodes = corpus.built["episodes"] if corpus.built else corpus.sections * a["episodes_per_section"]
    per_episode = min(settings.relate_episodes.window, settings.relate_episodes.max_candidates_per_episode)
    pairs = episodes * per_episode
    graph_requests = corpus.graph_requests or corpus.chunks
    narrative_requests = corpus.narrative_requests or corpus.chunks
    facts = settings.extract_facts
    profiled = entities * a["profiled_share_of_entities"]
    facts_requests = max(
        profiled / facts.max_entities_per_request,
        profiled * chunk * min(4, facts.max_chunks_per_entity) / max(1, facts.pack_tokens) / 2,
    )  # excerpts shared by about two entities of a request
    open_pairs = entities * a["ambiguous_share_of_entities"]
    merge = settings.canonicalize_entities
    merge_requests = max(
        open_pairs / merge.max_pairs_per_request, open_pairs * 2 * 110 / max(1, merge.pack_tokens)
    )
    per_document = corpus.sections / max(1, corpus.documents)
    scene_pairs = corpus.documents * per_document * (per_document - 1) / 2
    continuity = settings.continuity
    continuity_pairs = min(
        continuity.max_candidates * corpus.documents, scene_pairs * a["candidate_share_of_scene_pairs"]
    )
    judge_requests = max(  # pairs grouped while their scene packets fit the budget
        continuity_pairs / continuity.max_candidates_per_request,
        continuity_pairs * a["continuity_tokens_per_pair"] / max(1, continuity.pack_tokens),
    )
    docs = max(1, corpus.documents)

    def grouped(items: float, tokens_per_item: float, per_request: int, budget: int) -> float:
        """Requests for `items` grouped up to `per_request` a request and `budget` tokens (never
        across documents)."""
        if items <= 0:
            return 0.0
        per_document = max(
            items / docs / max(1, per_request), items / docs * tokens_per_item / max(1, budget)
        )
        return docs * math.ceil(per_document - 1e-9)

    relate = settings.relate_episodes
    relate_requests = grouped(
        pairs, a["relate_pair_tokens"], relate.max_pairs_per_request, relate.pack_tokens
    )
    assemble = settings.assemble_episodes
    assemble_requests = grouped(
        episodes, a["episode_block_tokens"], assemble.max_per_request, assemble.pack_tokens
    )
    shortcut = settings.break_cycles
    questions = min(shortcut.max_adjudications * docs, pairs * a["shortcut_share_of_pairs"])
    break_requests = grouped(
        questions, a["shortcut_question_tokens"], shortcut.max_per_request, shortcut.pack_tokens
    )
    induce = settings.induce_storylines
    storylines = docs * induce.max_storylines
    induce_requests = grouped(storylines, a["storyline_tokens"], induce.max_per_request, induce.pack_tokens)
    summary = settings.summarize_hierarchy
    # Summaries the model writes per document, and the tokens of their quotes (about 4/3 a word).
    summary_levels = {
        "work": (1, summary.work_words),
        "storyline": (induce.max_storylines, summary.storyline_words),
        "community": (settings.detect_communities.max_communities, summary.community_words),
        "episode": (episodes / docs, summary.episode_words),
    }
    summaries = docs * sum(summary_levels[level][0] for level in summary.llm_levels)
    chosen = [summary_levels[level] for level in summary.llm_levels]
    summary_tokens = docs * sum(n * words * 4 / 3 for n, words in chosen) / max(1.0, summaries)
    summary_requests = grouped(summaries, summary_tokens, summary.max_per_request, summary.pack_tokens)
    states = settings.character_states
    combined = settings.extract_graph.combined
    rounds = min(states.max_rounds, a["state_rounds_per_section"]) if states.critic else 1
    scene_block = (
        corpus.chunk_tokens * a["observable_share"] / max(1, corpus.sections) + STATE_SCENE_EXTRA_TOKENS
    )
    per_round = grouped(corpus.sections, scene_block, states.max_scenes_per_request, states.pack_tokens)
    # Extract requests (the combined extraction wrote the first round's), and a critic request each round.
    state_requests = per_round * ((rounds - (1 if combined else 0)) + (rounds if states.critic else 0))
    per_call_input = {
        "extract_graph": corpus.chunk_tokens / max(1, graph_requests)
        + (COMBINED_HEADER_TOKENS if combined else 0),
        "extract_narrative": corpus.chunk_tokens / max(1, narrative_requests) + 120,
        "extract_facts": corpus.chunk_tokens * 1.5 / max(1, facts_requests),
        "canonicalize_entities": open_pairs * 120 / max(1, merge_requests),
        "assemble_episodes": episodes * a["episode_block_tokens"] / max(1, assemble_requests),
        "relate_episodes": pairs * a["relate_pair_tokens"] / max(1, relate_requests),
        "break_cycles": questions * a["shortcut_question_tokens"] / max(1, break_requests),
        "induce_storylines": storylines * a["storyline_tokens"] / max(1, induce_requests),
        "summarize_hierarchy": summaries * summary_tokens / max(1, summary_requests),
        "judge_continuity": continuity_pairs * a["continuity_tokens_per_pair"] / max(1, judge_requests),
        "chain_continuity": 1200,
        "track_character_states": scene_block * corpus.sections / max(1, per_round),
    }
    calls = {
        "extract_graph": graph_requests * (2 if settings.extract_graph.gleaning else 1),
        "extract_narrative": narrative_requests,
        "canonicalize_entities": merge_requests if settings.canonicalize_entities.enabled else 0,
        "extract_facts": facts_requests if facts.enabled else 0,
        "assemble_episodes": assemble_requests,
        "relate_episodes": relate_requests,
        "break_cycles": break_requests if shortcut.mode == "saber" else 0,
        "induce_storylines": induce_requests,
        "summarize_hierarchy": summary_requests,
        "judge_continuity": judge_requests,
        "chain_continuity": corpus.sections * a["chains_per_section"],
        "track_character_states": state_requests,
    }.get(stage.name)
    if calls is None:
        return {"stage": stage.name, "calls": None, "prompt_tokens": None, "completion_tokens": None}
    calls = int(round(calls))
    prompt_tokens = int(calls * (_template_tokens(stage, settings) + per_call_input.get(stage.name, chunk)))
    if stage.name == "track_character_states" and states.critic:  # extract and critic templates
        prompt_tokens = int(
            calls / 2 * _template_tokens(stage, settings) + calls * per_call_input[stage.name]
        )
    if stage.name == "extract_graph" and combined and settings.extract_graph.gleaning:
        # the gleaning round asks once more per pack with the graph-only prompt
        text = corpus.chunk_tokens / max(1, graph_requests)
        prompt_tokens = int(
            graph_requests * (_template_tokens(stage, settings) + per_call_input["extract_graph"])
            + graph_requests * (_prompt_tokens(GRAPH_PROMPT_ID) + text)
        )
    completion = int(calls * max(60, per_call_input.get(stage.name, chunk) * a["completion_per_chunk_token"]))
    return {
        "stage": stage.name,
        "calls": calls,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
    }


def dry_run(
    paths: list[str],
    stages: list[Stage],
    settings: Settings,
    workspace: Workspace | None = None,
    price_per_million: float | None = None,
) -> dict[str, Any]:
    """Estimated calls and tokens per LLM stage; entity and episode counts come from a previous
    build in `workspace` when there is one, else from the ratios in ASSUMPTIONS."""
    corpus, problems = measure_corpus(paths, settings, workspace)
    rows = [estimate_stage(stage, corpus, settings, workspace) for stage in stages if stage.uses_llm]
    tokens = sum((r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0) for r in rows)
    cost = round(tokens / 1e6 * price_per_million, 4) if price_per_million is not None else None
    return {
        "corpus": corpus.__dict__,
        "stages": rows,
        "assumptions": ASSUMPTIONS,
        "unreadable_inputs": problems,
        "llm_configured": bool(settings.llm.url),
        "price_per_million": price_per_million,
        "cost": cost,
    }


def format_dry_run(report: dict[str, Any]) -> str:
    corpus = report["corpus"]
    lines = [
        f"dry run: {corpus['documents']} documents, {corpus['sections']} sections, "
        f"{corpus['chunks']} chunks, "
        f"{corpus['chunk_tokens']:,} source tokens (nothing written, no server called)"
    ]
    if not report["stages"]:
        lines.append("no LLM stages in this build")
    else:
        lines.append(f"{'stage':<24} {'calls':>8} {'prompt tokens':>14} {'completion':>12}")
        total = [0, 0, 0]
        for row in report["stages"]:
            if row["calls"] is None:
                lines.append(f"{row['stage']:<24} {'?':>8}")
                continue
            lines.append(
                f"{row['stage']:<24} {row['calls']:>8,} {row['prompt_tokens']:>14,} "
                f"{row['completion_tokens']:>12,}"
            )
            total = [
                total[0] + row["calls"],
                total[1] + row["prompt_tokens"],
                total[2] + row["completion_tokens"],
            ]
        lines.append(f"{'total':<24} {total[0]:>8,} {total[1]:>14,} {total[2]:>12,}")
        if report.get("cost") is not None:
            lines.append(
                f"cost: {total[1] + total[2]:,} tokens at {report['price_per_million']} per million tokens "
                f"= {report['cost']:,.2f}"
            )
        measured = [row["stage"] for row in report["stages"] if row.get("from") == "previous build"]
        if measured:
            lines.append(
                "from the previous build's items, grouped as the stages group them: " + ", ".join(measured)
            )
        if corpus.get("built"):
            lines.append(
                "entity and episode counts from the previous build: "
                + ", ".join(f"{k} {v:,}" for k, v in corpus["built"].items())
            )
        lines.append(
            "estimates assume "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report["assumptions"].items())
        )
    if not report["llm_configured"]:
        lines.append(
            "note: no --llm-url given; a real build would use the embedded (offline) implementations "
            "and make 0 calls"
        )
    lines.extend(f"unreadable: {p}" for p in report["unreadable_inputs"])
    return "\n".join(lines)
