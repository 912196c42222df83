"""llama.cpp's slots: a new prefix is read once with a one-token reply, that slot is copied into the
idle ones, and the request's reply counts the tokens the prime computed as its own."""

from __future__ import annotations

import json

import httpx

from tasks.llm.client.http import ChatReply
from tasks.llm.client.slot_copies import SlotCopies

BASE = "http://llama.test/v1"
PAYLOAD = {
    "model": "m",
    "messages": [{"role": "system", "content": "Instructions."}, {"role": "user", "content": "Passage."}],
    "max_completion_tokens": 900,
    "stream": True,
    "stream_options": {"include_usage": True},
    "response_format": {"type": "json_schema"},
    "tools": [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}],
}


class FakeLlama:
    """/slots, slot save and restore, and chat replies with llama.cpp's timings."""

    def __init__(self, busy: tuple[int, ...] = (), slots: bool = True, save_status: int = 200) -> None:
        self.busy, self.slots, self.save_status = busy, slots, save_status
        self.calls: list[tuple[str, str, dict]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else {}
        query = request.url.query.decode()
        self.calls.append((request.method, request.url.path + (f"?{query}" if query else ""), body))
        if request.url.path == "/slots":
            if not self.slots:
                return httpx.Response(501, json={"error": "slots endpoint disabled"})
            return httpx.Response(200, json=[{"id": n, "is_processing": n in self.busy} for n in range(3)])
        if request.url.path.startswith("/slots/"):
            status = self.save_status if "save" in request.url.query.decode() else 200
            return httpx.Response(status, json={"id_slot": int(request.url.path.rsplit("/", 1)[1])})
        if request.url.path == "/v1/chat/completions":
            return httpx.Response(
                200,
                json={
                    "choices": [{"message": {"content": "{"}, "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 900, "completion_tokens": 1},
                    "timings": {"cache_n": 12, "prompt_n": 888},
                },
            )
        return httpx.Response(404)


def test_the_prompt_is_read_once_on_an_idle_slot_and_copied_into_the_other_idle_ones():
    server = FakeLlama(busy=(0,))
    with httpx.Client(transport=httpx.MockTransport(server)) as http:
        primed = SlotCopies().prime(http, BASE, {}, PAYLOAD, 30.0)
    assert primed is not None and primed.slot == 1
    (_, _, prime) = next(c for c in server.calls if c[1] == "/v1/chat/completions")
    assert prime["max_completion_tokens"] == 1 and prime["id_slot"] == 1
    assert prime["messages"] == PAYLOAD["messages"]
    assert not {"stream", "stream_options", "response_format"} & set(prime)  # it only reads
    assert prime["tools"] == PAYLOAD["tools"]  # part of the prompt: the chat template writes them in
    slot_calls = [path for _, path, _ in server.calls if path.startswith("/slots/")]
    assert slot_calls == ["/slots/1?action=save", "/slots/2?action=restore"]  # slot 0 was busy
    assert primed.request(PAYLOAD)["id_slot"] == 1


def test_the_reply_counts_what_the_prime_computed():
    server = FakeLlama()
    with httpx.Client(transport=httpx.MockTransport(server)) as http:
        primed = SlotCopies().prime(http, BASE, {}, PAYLOAD, 30.0)
    assert primed is not None
    reply = ChatReply("{}", None, "stop", 900, 40, cached_prompt_tokens=899)
    assert primed.reply(reply).cached_prompt_tokens == 12  # 888 computed, by the prime
    unknown = ChatReply("{}", None, "stop", 900, 40)
    assert primed.reply(unknown).cached_prompt_tokens is None


def test_a_server_without_slots_is_asked_once_and_left_alone():
    server = FakeLlama(slots=False)
    copies = SlotCopies()
    with httpx.Client(transport=httpx.MockTransport(server)) as http:
        assert copies.prime(http, BASE, {}, PAYLOAD, 30.0) is None
        assert copies.prime(http, BASE, {}, PAYLOAD, 30.0) is None
    assert copies.usable is False
    assert [path for _, path, _ in server.calls] == ["/slots"]


def test_a_server_that_cannot_save_keeps_the_primed_slot_and_is_not_copied_again():
    server = FakeLlama(save_status=501)
    copies = SlotCopies()
    with httpx.Client(transport=httpx.MockTransport(server)) as http:
        primed = copies.prime(http, BASE, {}, PAYLOAD, 30.0)
        assert primed is not None and primed.slot == 0  # the request still finds its prompt there
        assert copies.prime(http, BASE, {}, PAYLOAD, 30.0) is None
    assert copies.usable is False
    assert not any("restore" in path for _, path, _ in server.calls)
