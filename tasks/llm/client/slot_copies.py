"""llama.cpp: a new prefix is read once and copied into the server's idle slots.

vLLM keeps one prefix cache for all its requests, but each llama.cpp slot keeps its own: a second
slot computes the instructions the first has just read (the host-memory prompt cache of the server
NKW starts restored nothing across slots). A llama.cpp server started with `--slot-save-path` saves
a slot's cache to a file and restores it into another slot in milliseconds, but saves a slot only
once it has stopped writing. So before the first request of a new prefix (`prefix_gate`) goes, its
prompt is read alone with a one-token reply (the prime) on an idle slot, that slot is saved and
restored into the other idle slots, and the request itself is sent to the primed slot: it computes
nothing, and the requests waiting for the prefix find it in the others.

The prime's cost is the request's: the request's reply says as cached only what was cached before
the prime (so `llm_calls` counts the prompt tokens the server computed for it, in the prime), and
the prime's one reply token is not counted. Any failure (no `/slots`, no save path, a slot taken
meanwhile) leaves the request to go as before; a server whose `/slots` or save fails is not
primed again.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from typing import Any

import httpx

from tasks.llm.client.http import ChatReply, HTTPCallError, post_chat, root_url

log = logging.getLogger(__name__)
TIMEOUT_S = 5.0  # the slot calls are local file copies: a server this slow to answer gets none
# Fields of a chat payload the one-token prime leaves out: it only reads the prompt. The offered tools
# stay: the chat template writes them into the prompt.
NOT_FOR_THE_PRIME = ("stream", "stream_options", "response_format", "grammar", "json_schema")


@dataclass(frozen=True)
class Primed:
    """Where a prompt was read ahead of its request, and what reading it computed."""

    slot: int
    cached_before: int | None  # prompt tokens the server had cached before the prime

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The request, sent to the primed slot."""
        return {**payload, "id_slot": self.slot}

    def reply(self, reply: ChatReply) -> ChatReply:
        """The request's reply with the prime's computed tokens as its own."""
        if reply.cached_prompt_tokens is None or self.cached_before is None:
            return reply
        return replace(reply, cached_prompt_tokens=min(reply.cached_prompt_tokens, self.cached_before))


class SlotCopies:
    """Per server: whether it copies slots (unknown until tried), and the priming."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._priming = threading.Lock()
        self.usable: bool | None = None

    def prime(
        self, http: httpx.Client, base: str, headers: dict[str, str], payload: dict[str, Any], timeout: float
    ) -> Primed | None:
        """Read `payload`'s prompt on an idle slot and copy that slot into the other idle ones;
        None when the server copies no slots, none is idle or the prime failed. One prime at a time:
        two would pick the same idle slot."""
        if self.usable is False:
            return None
        with self._priming:
            return self._prime(http, base, headers, payload, timeout)

    def _prime(
        self, http: httpx.Client, base: str, headers: dict[str, str], payload: dict[str, Any], timeout: float
    ) -> Primed | None:
        idle = self._idle(http, base, headers)
        if not idle:
            return None
        source = idle[0]
        prime = {k: v for k, v in payload.items() if k not in NOT_FOR_THE_PRIME}
        limit_key = "max_completion_tokens" if "max_completion_tokens" in payload else "max_tokens"
        prime.update({limit_key: 1, "id_slot": source})
        try:
            read = post_chat(http, base, headers, prime, timeout)
        except HTTPCallError as exc:
            log.info("llm: reading a prefix ahead failed: %s", exc)
            return None
        self._copy(http, base, headers, source, idle[1:])
        return Primed(source, read.cached_prompt_tokens)

    def _idle(self, http: httpx.Client, base: str, headers: dict[str, str]) -> list[int]:
        try:
            reply = http.get(f"{root_url(base)}/slots", headers=headers, timeout=TIMEOUT_S)
            slots = reply.json() if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            slots = None
        if not isinstance(slots, list) or not all(isinstance(s, dict) and "id" in s for s in slots):
            self._give_up(base, "no /slots")
            return []
        return [int(s["id"]) for s in slots if not s.get("is_processing")]

    def _copy(
        self, http: httpx.Client, base: str, headers: dict[str, str], source: int, targets: list[int]
    ) -> None:
        if not targets:
            return
        root, name = root_url(base), f"nkw-prefix-slot-{source}.bin"
        try:
            saved = http.post(
                f"{root}/slots/{source}", params={"action": "save"}, json={"filename": name},
                headers=headers, timeout=TIMEOUT_S,
            )  # fmt: skip
        except httpx.HTTPError as exc:
            log.info("llm: saving slot %d failed: %s", source, type(exc).__name__)
            return
        if saved.status_code != 200:
            self._give_up(base, f"slot save answered HTTP {saved.status_code}")
            return
        with self._lock:
            self.usable = True
        for target in targets:
            try:  # a slot taken in between answers an error and computes the prefix itself
                http.post(
                    f"{root}/slots/{target}", params={"action": "restore"}, json={"filename": name},
                    headers=headers, timeout=TIMEOUT_S,
                )  # fmt: skip
            except httpx.HTTPError:
                pass

    def _give_up(self, base: str, reason: str) -> None:
        with self._lock:
            if self.usable is None:
                log.info("llm: %s: prefixes are not copied between slots (%s)", base, reason)
                self.usable = False
