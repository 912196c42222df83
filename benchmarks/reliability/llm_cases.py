"""Misbehaving LLM servers during a build: replies that are valid JSON but useless, replies that
never come, replies holding megabytes. A build that lost items must say INCOMPLETE and exit
non-zero; the next build against a healthy server must recover every item."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from benchmarks.reliability.registry import Context, Outcome, case, judged, setup

FAMILY = "llm replies"
UNTIL = "extract_narrative"
GRAPH = ("CombinedExtraction", "GraphExtraction")
FAST = """[llm]
timeout_s = 2.0
deadline_s = 6.0
max_retries = 1
backoff_s = 0.0
concurrency = 4
"""


def _schema_name(body: dict[str, Any]) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


class Faulty:
    """The pipeline's replies, with `reply(body, normal)` instead for requests of `schemas` while on."""

    def __init__(self, schemas: tuple[str, ...], reply) -> None:
        from tests.fixtures.pipeline_llm import pipeline_responder

        self.normal, self.schemas, self.reply = pipeline_responder, schemas, reply
        self.on, self.fired = True, 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        normal = self.normal(body)
        if not self.on or _schema_name(body) not in self.schemas:
            return normal
        with self.lock:
            self.fired += 1
        return self.reply(body, normal)


@setup(FAMILY)
def _clean(ctx: Context):
    from tests.fixtures.openai_server import FakeOpenAIServer
    from tests.fixtures.pipeline_llm import pipeline_responder

    config = ctx.scratch / "llm.toml"
    config.write_text(FAST)
    ctx.shared["llm_config"] = config
    ws = ctx.scratch / "llm-clean"
    with FakeOpenAIServer(model_names=("test-model",), responder=pipeline_responder) as server:
        run = ctx.nkw(*_args(ws, server.url, config), timeout=300)
    if run.rc != 0:
        raise RuntimeError(f"the fault-free build failed: {run.err[-300:]}")
    ctx.shared["llm_clean"] = _contents(ws)
    return None


def _args(ws: Path, url: str, config: Path, *extra: str) -> list[str]:
    from tests.conftest import SCREENPLAY

    return [
        "build", str(SCREENPLAY), "-w", str(ws), "--embeddings", "hashing", "--no-prefect",
        "--llm-url", url, "--model", "test-model", "--config", str(config), "--until", UNTIL, *extra,
    ]  # fmt: skip


def _contents(ws: Path) -> dict[str, list]:
    from tasks.tables.io import Workspace
    from tests.faults.conftest import table_contents

    return table_contents(Workspace.at(ws))


def _lost_rows(ws: Path) -> int:
    from tasks.tables.io import Workspace, read_frame

    failures = read_frame(Workspace.at(ws), "failures")
    return int(failures["error"].str.startswith("llm ").sum()) if len(failures) else 0


def _attack(
    ctx: Context, name: str, responder=None, faults: tuple[str, ...] = (), config: str = FAST
) -> Outcome:
    """Build under the fault, then again against a healthy server; judge both."""
    from tests.fixtures.openai_server import FakeOpenAIServer
    from tests.fixtures.pipeline_llm import pipeline_responder

    ws = ctx.scratch / f"llm-{name}"
    path = ctx.scratch / f"llm-{name}.toml"
    path.write_text(config)
    with FakeOpenAIServer(
        model_names=("test-model",), responder=responder or pipeline_responder, hang_s=30.0
    ) as server:
        if faults:
            server.set_fault_rate(1.0, kinds=faults)
        faulted = ctx.nkw(*_args(ws, server.url, path), timeout=240)
        if faulted.hung or faulted.has_traceback:
            return judged(faulted)
        lost = _lost_rows(ws)
        if faulted.rc == 0 and lost:
            return Outcome(False, data_loss=True, note=f"{lost} item(s) lost, exit 0")
        if lost and "INCOMPLETE" not in faulted.out:
            return Outcome(False, data_loss=True, note="items lost without INCOMPLETE")
        if isinstance(responder, Faulty):
            responder.on = False
        server.set_fault_rate(0.0)
        recovered = ctx.nkw(*_args(ws, server.url, path), timeout=240)
    outcome = judged(recovered, expect_error=False)
    if not outcome.handled:
        return outcome
    if _contents(ws) != ctx.shared["llm_clean"]:
        return Outcome(False, data_loss=True, note="the recovered build differs from a fault-free one")
    return Outcome(True, note=f"{lost} lost item(s), rc {faulted.rc}, recovered")


@case(FAMILY)
def schema_violating_json(ctx: Context) -> Outcome:
    return _attack(ctx, "schema", Faulty(GRAPH, lambda body, normal: json.dumps([{"not": "the schema"}])))


@case(FAMILY)
def content_null(ctx: Context) -> Outcome:
    return _attack(ctx, "null", Faulty(GRAPH, lambda body, normal: {"tool_calls": [], "content": None}))


@case(FAMILY)
def batch_leaves_an_item_out(ctx: Context) -> Outcome:
    def drop_last(body, normal):
        answer = json.loads(normal)
        answer["items"] = answer["items"][:-1]
        return json.dumps(answer)

    return _attack(ctx, "missing", Faulty(("MergeJudgementBatch",), drop_last))


@case(FAMILY)
def five_megabyte_alias(ctx: Context) -> Outcome:
    def huge(body, normal):
        answer = json.loads(normal)
        for entity in answer.get("entities", [])[:1]:
            entity["aliases"] = [*entity["aliases"][:7], "Ab" * 2_500_000]
        for event in answer.get("events", [])[:1]:
            event["participants"] = [*event["participants"][:11], "Cd" * 2_500_000]
        return json.dumps(answer)

    packed = FAST  # the default packing: several scenes per request, split back by name matching
    return _attack(ctx, "huge", Faulty(GRAPH, huge), config=packed)


@case(FAMILY)
def a_hundred_thousand_brackets(ctx: Context) -> Outcome:
    return _attack(ctx, "nested", Faulty(GRAPH, lambda body, normal: "[" * 100_000 + "]" * 100_000))


@case(FAMILY)
def ten_thousand_entities(ctx: Context) -> Outcome:
    def many(body, normal):
        answer = json.loads(normal)
        template = (
            answer.get("entities") or [{"name": "X", "type": "object", "description": "", "aliases": []}]
        )[0]
        answer["entities"] = [{**template, "name": f"Name {i}"} for i in range(10_000)]
        return json.dumps(answer)

    return _attack(ctx, "many", Faulty(GRAPH, many))


@case(FAMILY)
def numbers_out_of_range(ctx: Context) -> Outcome:
    def overflow(body, normal):
        return re.sub(r'"strength": ?\d+', '"strength": 1e400', normal)

    return _attack(ctx, "numbers", Faulty(GRAPH, overflow))


@case(FAMILY)
def malformed_json(ctx: Context) -> Outcome:
    return _attack(ctx, "malformed", faults=("malformed_json",))


@case(FAMILY)
def truncated_replies(ctx: Context) -> Outcome:
    return _attack(ctx, "length", faults=("length",))


@case(FAMILY)
def refusals(ctx: Context) -> Outcome:
    return _attack(ctx, "refusal", faults=("refusal",))


@case(FAMILY)
def server_errors(ctx: Context) -> Outcome:
    return _attack(ctx, "http500", faults=("http_500",))


@case(FAMILY)
def replies_that_never_come(ctx: Context) -> Outcome:
    return _attack(ctx, "hang", faults=("hang",))
