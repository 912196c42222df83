"""Misbehaving LLM replies that arrive fine over HTTP: valid JSON against the wrong schema,
`content: null`, a batched reply that leaves items out, a reply holding a 5 MB string. Lost
items make the stage `partial` (recorded in the manifest), the build says INCOMPLETE and exits
non-zero, and the next build or `--retry-failed` asks exactly the lost items again and ends
equal to a fault-free build. Nothing pins a core."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace, read_frame
from tasks.tables.manifest import load_manifest
from tests.conftest import SCREENPLAY
from tests.faults.conftest import llm_config, table_contents
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import first_user_text, pipeline_responder

DOC = "the_lighthouse_key"
UNTIL = "extract_narrative"
GRAPH_SCHEMAS = ("CombinedExtraction", "GraphExtraction")


def _schema_name(body: dict[str, Any]) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


class Poisoned:
    """The pipeline's replies, except for the first `count` distinct requests of `schemas` while
    `active`: those get `mode`'s reply (asked again, the same request gets it again)."""

    def __init__(
        self, mode: str, schemas: tuple[str, ...], count: int = 2, modes: tuple[str, ...] = ()
    ) -> None:
        self.mode, self.schemas, self.count = mode, schemas, count
        self.modes = modes  # when given: the n-th poisoned request gets modes[n]
        self.active = True
        self.poisoned: dict[str, str] = {}  # first user text -> its mode
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        reply = pipeline_responder(body)
        if not self.active or _schema_name(body) not in self.schemas:
            return reply
        key = first_user_text(body)
        with self.lock:
            if key not in self.poisoned and len(self.poisoned) >= self.count:
                return reply
            mode = self.poisoned.setdefault(key, self.modes[len(self.poisoned)] if self.modes else self.mode)
        return self._reply(mode, reply)

    def _reply(self, mode: str, reply: str) -> Any:
        if mode == "schema":
            return json.dumps([{"valid": "json", "wrong": "schema"}])
        if mode == "null":
            return {"tool_calls": [], "content": None}
        if mode == "missing":
            answer = json.loads(reply)
            answer["items"] = answer["items"][:-1]  # the last numbered item is left out
            return json.dumps(answer)
        if mode == "huge":  # 5 MB strings where the schema sets no length: aliases, participants
            answer = json.loads(reply)
            big = "Ab" * 2_500_000
            for entity in answer.get("entities", [])[:1]:
                entity["aliases"] = [*entity["aliases"][:7], big]
            for event in answer.get("events", [])[:1]:
                event["participants"] = [*event["participants"][:11], big]
            for item in answer.get("interactions", [])[:1]:
                item["subject"] = big
            return json.dumps(answer)
        if mode == "nested":
            return "[" * 100_000 + "]" * 100_000
        if mode == "many":  # far past the schema's 120 entities
            answer = json.loads(reply)
            template = answer["entities"][0]
            answer["entities"] = [{**template, "name": f"Name {i}"} for i in range(10_000)]
            return json.dumps(answer)
        if mode == "overflow":
            return re.sub(r'"strength": ?\d+', '"strength": 1e400', reply)
        raise ValueError(mode)


def _build(ws: Workspace, url: str, config, capsys, *extra: str) -> tuple[int, str, str]:
    args = ["build", "-w", str(ws.root), "--embeddings", "hashing", "--no-prefect", "--llm-url", url]
    args += ["--model", TEST_MODEL, "--config", str(config), "--until", UNTIL, *extra]
    if "--retry-failed" not in extra:
        args.insert(1, str(SCREENPLAY))
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("clean-replies")
    ws = Workspace.at(root / "ws")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        args = ["build", str(SCREENPLAY), "-w", str(ws.root), "--embeddings", "hashing", "--no-prefect", "-q"]
        args += ["--llm-url", server.url, "--model", TEST_MODEL, "--config", str(llm_config(root))]
        assert main([*args, "--until", UNTIL]) == 0
    return table_contents(ws)


def _asked(server: FakeOpenAIServer, schemas: tuple[str, ...]) -> list[str]:
    return [first_user_text(r.body) for r in server.chat_requests() if _schema_name(r.body) in schemas]


@pytest.mark.parametrize(
    "mode, schemas, stage",
    [
        ("schema", GRAPH_SCHEMAS, "extract_graph"),
        ("null", GRAPH_SCHEMAS, "extract_graph"),
        ("missing", ("MergeJudgementBatch",), "canonicalize_entities"),
    ],
)
@pytest.mark.parametrize("recovery", ["rebuild", "retry-failed"])
def test_unusable_replies_make_the_stage_partial_and_are_asked_again(
    mode, schemas, stage, recovery, tmp_path, capsys, clean_build
):
    ws, config = Workspace.at(tmp_path / "ws"), llm_config(tmp_path)
    poisoned = Poisoned(mode, schemas)
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=poisoned) as server:
        rc, out, err = _build(ws, server.url, config, capsys)
        assert poisoned.poisoned, "the fault never fired"
        assert rc != 0 and "INCOMPLETE:" in out and "0 partial" not in out and "Traceback" not in err, out
        assert load_manifest(ws, DOC).stages[stage].status == "partial"
        failures = read_frame(ws, "failures")
        lost = failures[(failures["stage"] == stage) & failures["error"].str.startswith("llm ")]
        # a batch that left one item out (asked, then asked again alone) loses that one item
        assert len(lost) >= (1 if mode == "missing" else len(poisoned.poisoned))
        if mode == "missing":
            assert lost["error"].str.startswith("llm missing:").all()

        poisoned.active = False
        server.reset()
        extra = ("--retry-failed",) if recovery == "retry-failed" else ()
        rc, out, _ = _build(ws, server.url, config, capsys, *extra)
        assert rc == 0 and "INCOMPLETE" not in out, out
        again = _asked(server, schemas)
    # exactly the lost requests are asked again (a batch that left items out: only those items)
    if mode == "missing":
        assert again and len(again) <= len(poisoned.poisoned)
    else:
        assert sorted(set(again)) == sorted(poisoned.poisoned)
    assert {r.status for r in load_manifest(ws, DOC).stages.values()} == {"built"}
    assert table_contents(ws) == clean_build


def test_a_healthy_rebuild_after_a_partial_one_is_not_up_to_date(tmp_path, capsys):
    ws, config = Workspace.at(tmp_path / "ws"), llm_config(tmp_path)
    poisoned = Poisoned("schema", GRAPH_SCHEMAS, count=1)
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=poisoned) as server:
        assert _build(ws, server.url, config, capsys)[0] != 0
        rc, out, _ = _build(ws, server.url, config, capsys)  # still poisoned: still incomplete
        assert rc != 0 and "INCOMPLETE:" in out and "up to date" not in out
        assert main(["inspect", "-w", str(ws.root)]) == 0
        assert "partial" in capsys.readouterr().out


def test_a_huge_string_in_a_reply_does_not_pin_a_core(tmp_path, capsys):
    """5 MB names in a valid reply to a packed request (several scenes, split back per scene by
    name matching): bounded work, never a 5 MB surface in the lexicon."""
    ws, config = Workspace.at(tmp_path / "ws"), llm_config(tmp_path)
    config.write_text(config.read_text().split("[extract_graph]")[0])  # the default packing
    poisoned = Poisoned("huge", GRAPH_SCHEMAS, count=1)
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=poisoned) as server:
        started = time.monotonic()
        rc, out, err = _build(ws, server.url, config, capsys)
        seconds = time.monotonic() - started
    assert poisoned.poisoned and "Traceback" not in err and rc == 0, err
    assert seconds < 60, seconds
    assert read_frame(ws, "raw_mentions")["surface"].str.len().max() < 1000


def test_hostile_reply_shapes_are_lost_items_never_a_traceback(tmp_path, capsys):
    """100,000 nested brackets, 10,000 entities, a number past float range: one request each. The
    10,000 entities are cut to the schema's bound (a list over its cap keeps its first items, as a
    looping model's reply does) and, named nowhere in the text, never become entities; the other
    two are lost items."""
    ws, config = Workspace.at(tmp_path / "ws"), llm_config(tmp_path)
    poisoned = Poisoned("nested", GRAPH_SCHEMAS, count=3, modes=("nested", "many", "overflow"))
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=poisoned) as server:
        rc, out, err = _build(ws, server.url, config, capsys)
    # (the test server may log a reset connection of its own: only nkw's output is judged)
    assert len(poisoned.poisoned) == 3 and "Traceback" not in out
    assert all("socketserver.py" in block for block in err.split("Traceback")[1:]), err
    assert rc == 1 and "INCOMPLETE: 2 item(s) lost" in out, out
    assert load_manifest(ws, DOC).stages["extract_graph"].status == "partial"
    names = read_frame(ws, "raw_entities")["name"]
    assert not names.str.fullmatch(r"Name \d+").any()  # kept in the reply, never grounded in the text
