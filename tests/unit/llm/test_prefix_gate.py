"""The first request with a new instructions prefix goes alone: the requests sharing it are sent
once the server has read it (its first streamed event), not before and not after its whole reply."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from tasks.llm.client.http import api_base
from tasks.llm.client.pool import server_pool
from tasks.llm.client.prefix_gate import MIN_SHARED_CHARS, PrefixGate, shared_prefix
from tasks.llm.client.streaming import stream_payload
from tests.fixtures.openai_server import FakeOpenAIServer

HEADERS = {"Authorization": "Bearer test"}
INSTRUCTIONS = "Extract the entities of the passage. " * (MIN_SHARED_CHARS // 30)
READ_S = 0.4  # the fake's time to its first event: the prompt being read
WORD_S = 0.1  # then one word per WORD_S
REPLY = "one two three four five six seven eight"


def _payload(system: str, text: str) -> dict:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": text}]
    return stream_payload({"model": "test-model", "messages": messages, "max_tokens": 16})


def _send_all(payloads: list[dict]) -> tuple[FakeOpenAIServer, list[float], float]:
    """Send the payloads at once through one pool of 3 slots; the fake's request arrival times
    (from the first) and when the first reply ended."""
    with FakeOpenAIServer(
        responder=lambda body: REPLY, latency_s=READ_S, decode_s_per_token=WORD_S, stream_replies=True
    ) as server:
        base = api_base(server.url)
        pool = server_pool(base, 3)
        start = time.monotonic()
        ended: list[float] = []
        with httpx.Client() as http:

            def ask(payload: dict) -> str | None:
                reply = pool.post_chat(http, base, HEADERS, payload, 30.0, 10.0)
                ended.append(time.monotonic() - start)
                return reply.content

            with ThreadPoolExecutor(len(payloads)) as threads:
                first = threads.submit(ask, payloads[0])
                time.sleep(0.05)  # the first is sent first
                rest = [threads.submit(ask, p) for p in payloads[1:]]
                assert [f.result() for f in (first, *rest)] == [REPLY] * len(payloads)
        arrivals = sorted(r.arrived for r in server.chat_requests())
        return server, [a - arrivals[0] for a in arrivals], min(ended)


def test_requests_sharing_instructions_wait_for_the_first_to_be_read():
    payloads = [_payload(INSTRUCTIONS, f"passage {n}") for n in range(3)]
    _, arrivals, first_ended = _send_all(payloads)
    # The two others arrive after the first's prompt was read (its first event) ...
    assert all(a >= READ_S * 0.9 for a in arrivals[1:]), arrivals
    # ... and while it is still writing, not after its whole reply.
    assert all(a < first_ended - 3 * WORD_S for a in arrivals[1:]), (arrivals, first_ended)


def test_short_or_different_instructions_go_at_once():
    payloads = [_payload("Be brief.", f"passage {n}") for n in range(2)]
    payloads.append(_payload("Other instructions. " * 80, "passage"))
    _, arrivals, _ = _send_all(payloads)
    assert max(arrivals) < READ_S * 0.5, arrivals


def test_a_first_request_that_fails_lets_the_others_go():
    gate = PrefixGate()
    payload = _payload(INSTRUCTIONS, "passage")
    try:
        with gate.turn(payload, 5.0):
            raise RuntimeError("the server went away")
    except RuntimeError:
        pass
    started = time.monotonic()
    with gate.turn(payload, 5.0):
        pass
    assert time.monotonic() - started < 0.5


def test_the_prefix_key_is_the_model_and_its_system_message():
    payload = _payload(INSTRUCTIONS, "passage one")
    assert shared_prefix(payload) == shared_prefix(_payload(INSTRUCTIONS, "passage two"))
    assert shared_prefix(payload) != shared_prefix({**payload, "model": "other"})
    assert shared_prefix({"model": "m", "messages": payload["messages"][1:]}) is None  # no system message
