"""Rows 1-3 of the cost benchmark: a build of one document through the OpenAI-compatible test
server, with the `--dry-run` estimates before (from an offline build's items) and after (from its
own items); prompt tokens per stage, projected at the offline item counts too."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from flows.build.corpus import make_resources  # noqa: E402
from flows.build.dry_run import dry_run  # noqa: E402
from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from flows.stages import select_stages  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.llm.client.openai_client import OpenAICompatibleClient  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tasks.tables.manifest import list_manifests  # noqa: E402
from tasks.text import count_tokens  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fixtures.pipeline_llm import pipeline_responder  # noqa: E402

PRICE_PER_MILLION = 0.5
LLM_STAGES = (
    "extract_graph",
    "canonicalize_entities",
    "extract_narrative",
    "extract_facts",
    "assemble_episodes",
    "relate_episodes",
    "break_cycles",
    "induce_storylines",
)
try:  # prompt tokens counted in the unit of the source tokens (a fixture from before counts words)
    FakeOpenAIServer(count_tokens=count_tokens)
    TOKEN_UNIT: dict = {"count_tokens": count_tokens}
except TypeError:  # pragma: no cover - measuring a tree from before the change
    TOKEN_UNIT = {}
DOWNSTREAM_STAGES = ("judge_continuity", "chain_continuity", "track_character_states")


def _ratio(estimate: float, actual: float) -> str:
    """An estimate ÷ the actual figure, six wide; "—" when nothing actual is there to divide by (a
    stage that made no request: its estimate is shown beside it)."""
    return f"{estimate / actual:>6.2f}" if actual else f"{'—':>6}"


def stage_items(workspace: Workspace) -> dict[str, int]:
    """The item count each LLM stage works over (the unit its calls scale with)."""

    def rows(table: str) -> int:
        return len(read_frame(workspace, table))

    units = rows("events") + rows("interactions") + rows("occasions")
    return {
        "extract_graph": rows("chunks"),
        "extract_narrative": rows("chunks"),
        "canonicalize_entities": rows("raw_entities"),
        "extract_facts": rows("entities"),
        "assemble_episodes": units,
        "relate_episodes": rows("episodes"),
        "break_cycles": rows("episode_links"),
        "induce_storylines": rows("episodes"),
        "judge_continuity": rows("continuity_candidates"),
        "chain_continuity": rows("continuity_judgments"),
        "track_character_states": rows("character_states"),
    }


def asked_items(workspace: Workspace) -> dict[str, int]:
    """The items each LLM stage puts into its requests (what a request holds up to its
    `max_*_per_request` or token budget): open merge pairs (decided `llm`, or `rule:no_evidence`
    offline), episodes, candidate pairs, shortcut questions (rules `llm_*`), storylines,
    continuity candidates asked, preliminary chains, scenes with character states."""

    def frame(table: str):
        return read_frame(workspace, table)

    merges, actions, chains = frame("merge_decisions"), frame("saber_actions"), frame("continuity_chains")
    asked = actions[actions["rule"].astype(str).str.startswith("llm_")] if len(actions) else actions
    pairs = sum(
        int(m.stages["relate_episodes"].details.get("candidate_pairs") or 0)
        for m in list_manifests(workspace)
        if "relate_episodes" in m.stages
    )
    states = frame("character_states")
    candidates = frame("continuity_candidates")
    per_doc = candidates.groupby("doc_id").size() if len(candidates) else pd.Series(dtype=int)
    return {
        "canonicalize_entities": int(merges["method"].isin(["llm", "rule:no_evidence"]).sum()),
        "assemble_episodes": len(frame("episodes")),
        "relate_episodes": pairs,
        "break_cycles": len(asked.drop_duplicates(["doc_id", "relation_id"])) if len(asked) else 0,
        "induce_storylines": len(frame("storylines")),
        "judge_continuity": int(per_doc.clip(upper=load_settings().continuity.max_candidates).sum()),
        "chain_continuity": int((chains["kind"] == "preliminary").sum()) if len(chains) else 0,
        "track_character_states": int(states["section_id"].nunique()) if len(states) else 0,
    }


def llm_build(doc_path: Path, folder: Path, latency: float, concurrency: int, previous: Workspace) -> dict:
    with FakeOpenAIServer(
        model_names=("bench-model",), responder=pipeline_responder, latency_s=latency, **TOKEN_UNIT
    ) as server:
        workspace = Workspace.at(folder / "llm")
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {
                    "url": server.url,
                    "model": "bench-model",
                    "concurrency": concurrency,
                    "timeout_s": 30,
                },
            }
        )
        try:  # a previous (offline) build's entity and episode counts, where the dry run can use them
            estimate = dry_run([str(doc_path)], select_stages(), settings, previous, PRICE_PER_MILLION)
        except TypeError:  # pragma: no cover - a tree from before the dry run took a workspace
            estimate = {"stages": dry_run([str(doc_path)], select_stages(), settings)["stages"]}
        with OpenAICompatibleClient(settings.llm) as client:
            started = time.perf_counter()
            report = build(
                [str(doc_path)],
                workspace,
                settings,
                resources=make_resources(settings, llm=client),
                quiet=True,
            )
            wall = time.perf_counter() - started
        arrivals = sorted(r.arrived for r in server.chat_requests())
        try:  # the same dry run once this build exists: its own items, the rebuild estimate
            rebuild = dry_run([str(doc_path)], select_stages(), settings, workspace, PRICE_PER_MILLION)
        except TypeError:  # pragma: no cover - a tree from before the dry run took a workspace
            rebuild = {"stages": []}
    calls = read_frame(workspace, "llm_calls")
    return {
        "workspace": workspace,
        "wall": wall,
        "ok": report.ok,
        "calls": calls,
        "arrivals": arrivals,
        "estimate": {row["stage"]: row for row in estimate["stages"]},
        "rebuild": {row["stage"]: row for row in rebuild["stages"]},
        "cost": estimate.get("cost"),
        "source_tokens": int(read_frame(workspace, "chunks")["n_tokens"].sum()),
        "items": stage_items(workspace),
        "asked": asked_items(workspace),
    }


def print_llm(llm: dict, offline: dict, latency: float, concurrency: int) -> None:
    calls, source = llm["calls"], llm["source_tokens"]
    print(
        f"\n[1] LLM prompt tokens / source tokens ({source:,} source tokens; test server; "
        f"build {llm['wall']:.1f} s, "
        f"ok={llm['ok']})"
    )
    print(
        f"  {'stage':<22} {'calls':>6} {'prompt tok':>11} {'/ source':>9} {'items llm':>9} {'items off':>9} "
        f"{'projected / source':>19}"
    )
    total = projected_total = 0.0
    calls_total = 0
    for stage in LLM_STAGES + DOWNSTREAM_STAGES:
        if stage == DOWNSTREAM_STAGES[0]:
            print(
                f"  {'construction total':<22} {calls_total:>6} {total:>11,.0f} {total / source:>9.2f} "
                f"{'':>9} {'':>9} {projected_total / source:>19.2f}"
            )
        group = calls[calls["stage"] == stage]
        prompt = float(group["prompt_tokens"].sum())
        items_llm, items_off = llm["items"].get(stage, 0), offline["items"].get(stage, 0)
        projected = prompt / items_llm * items_off if items_llm else prompt
        total += prompt
        projected_total += projected
        calls_total += len(group)
        print(
            f"  {stage:<22} {len(group):>6} {prompt:>11,.0f} {prompt / source:>9.2f} "
            f"{items_llm:>9} {items_off:>9} "
            f"{projected / source:>19.2f}"
        )
    print(
        f"  {'total with downstream':<22} {len(calls):>6} {total:>11,.0f} {total / source:>9.2f} {'':>9} "
        f"{'':>9} {projected_total / source:>19.2f}"
    )
    arrivals = llm["arrivals"]
    window = arrivals[-1] + latency - arrivals[0] if arrivals else 0.0
    achieved = len(arrivals) * latency / window if window else 0.0
    print(
        f"\n[2] concurrency: {len(arrivals)} requests at {latency * 1000:.0f} ms, "
        f"{concurrency} in flight; first request to "
        f"last reply {window:.1f} s; achieved {achieved:.1f} / configured {concurrency} = "
        f"{achieved / concurrency:.2f}"
    )
    idle, busy_until = 0.0, None
    for arrived in arrivals:
        if busy_until is not None and arrived > busy_until:
            idle += arrived - busy_until
        busy_until = max(busy_until or arrived, arrived + latency)
    print(
        f"  server idle (no request in flight) {idle:.1f} s of the window; while busy "
        f"{len(arrivals) * latency / max(1e-9, window - idle):.1f} in flight on average"
    )
    print(
        "\n[3] --dry-run estimate (from the offline build's items) vs actual, per stage (calls; prompt "
        "tokens). The items differ: 'asked' counts what each stage puts into its requests in either "
        "build; 'at offline' re-packs the offline build's asked items as densely as the test-server "
        "build packed its own (calls = ceil(asked off / asked per request)) and scales its prompt "
        "tokens per asked item"
    )
    print(
        f"  {'stage':<22} {'asked':>6} {'off':>5} {'est calls':>9} {'calls':>6} {'ratio':>6} {'at off':>6} "
        f"{'ratio':>6} {'est prompt':>11} {'prompt':>10} {'ratio':>6} {'at offline':>10} {'ratio':>6}"
    )
    totals = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for stage in LLM_STAGES + DOWNSTREAM_STAGES:
        row = llm["estimate"].get(stage) or {}
        group = calls[calls["stage"] == stage]
        est_calls, est_prompt = row.get("calls") or 0, row.get("prompt_tokens") or 0
        actual_prompt = int(group["prompt_tokens"].sum())
        asked_llm, asked_off = llm["asked"].get(stage), offline["asked"].get(stage)
        if asked_llm is None:  # packed by chunks: the same chunks in both builds
            asked_llm = asked_off = llm["items"].get(stage, 0)
        per_request = asked_llm / len(group) if len(group) else 0.0
        at_calls = math.ceil(asked_off / per_request - 1e-9) if per_request else 0
        at_prompt = actual_prompt * asked_off / asked_llm if asked_llm else 0.0
        totals = [
            totals[0] + est_calls,
            totals[1] + len(group),
            totals[2] + at_calls,
            totals[3] + est_prompt,
            totals[4] + actual_prompt,
            totals[5] + at_prompt,
        ]
        print(
            f"  {stage:<22} {asked_llm:>6} {asked_off:>5} {est_calls:>9} {len(group):>6} "
            f"{_ratio(est_calls, len(group))} {at_calls:>6} {_ratio(est_calls, at_calls)} "
            f"{est_prompt:>11,} {actual_prompt:>10,} {_ratio(est_prompt, actual_prompt)} "
            f"{at_prompt:>10,.0f} {_ratio(est_prompt, at_prompt)}"
        )
    print(
        f"  {'total':<22} {'':>6} {'':>5} {totals[0]:>9.0f} {totals[1]:>6.0f} "
        f"{_ratio(totals[0], totals[1])} {totals[2]:>6.0f} {_ratio(totals[0], totals[2])} "
        f"{totals[3]:>11,.0f} {totals[4]:>10,.0f} {_ratio(totals[3], totals[4])} "
        f"{totals[5]:>10,.0f} {_ratio(totals[3], totals[5])}"
    )
    print(
        "\n[3b] --dry-run over the LLM build's own workspace (its items) vs that build's calls "
        "and prompt tokens"
    )
    print(
        f"  {'stage':<22} {'est calls':>9} {'calls':>6} {'ratio':>6} {'est prompt':>11} {'prompt':>10} "
        f"{'ratio':>6}"
    )
    sums = [0, 0, 0, 0]
    for stage in LLM_STAGES + DOWNSTREAM_STAGES:
        row = llm["rebuild"].get(stage) or {}
        group = calls[calls["stage"] == stage]
        est_calls, est_prompt = row.get("calls") or 0, row.get("prompt_tokens") or 0
        actual_prompt = int(group["prompt_tokens"].sum())
        sums = [sums[0] + est_calls, sums[1] + len(group), sums[2] + est_prompt, sums[3] + actual_prompt]
        print(
            f"  {stage:<22} {est_calls:>9} {len(group):>6} {_ratio(est_calls, len(group))} "
            f"{est_prompt:>11,} {actual_prompt:>10,} {_ratio(est_prompt, actual_prompt)}"
        )
    print(
        f"  {'total':<22} {sums[0]:>9} {sums[1]:>6} {_ratio(sums[0], sums[1])} "
        f"{sums[2]:>11,} {sums[3]:>10,} {_ratio(sums[2], sums[3])}"
    )
    if llm.get("cost") is not None:
        actual = int(calls["prompt_tokens"].sum() + calls["completion_tokens"].sum())
        print(
            f"  cost at {PRICE_PER_MILLION} per million tokens: estimated {llm['cost']:.2f}, "
            f"actual {actual / 1e6 * PRICE_PER_MILLION:.2f}"
        )
