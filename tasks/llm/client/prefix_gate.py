"""The first request with a new instructions prefix goes to the server alone.

A stage sends all its items at once, and every request starts with the same instructions (the
system message: the stage's prompt and the reply's fields). On a server with several slots the
first requests all start cold, so each computes the instructions itself: with two llama.cpp slots,
about 1,650 tokens of the combined extraction's instructions were computed twice at the start of
every build. A server reads a prefix from its cache only once some request has computed it. So the
first request of a prefix goes alone, and the requests sharing it wait until the server has read it
(the first streamed event of its reply), not for its whole reply. vLLM's prefix cache serves every
request; llama.cpp's slots each keep their own, so there the first request has its prompt read
ahead and copied into the idle slots (`tasks.llm.client.slot_copies`).

A prefix is let through once per server pool and for good: later requests of the same stage find
it cached, or compute it no more than they did before.
"""

from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

# Shorter instructions cost the server less to compute twice than a request's wait for another's
# prompt costs the build.
MIN_SHARED_CHARS = 1000


def shared_prefix(payload: dict[str, Any]) -> str | None:
    """The key of the prefix a chat payload shares with the other requests of its stage: its model
    and system message, when the system message is long enough to matter; else None."""
    messages = payload.get("messages") or []
    if len(messages) < 2 or not isinstance(messages[0], dict) or messages[0].get("role") != "system":
        return None
    content = messages[0].get("content")
    if not isinstance(content, str) or len(content) < MIN_SHARED_CHARS:
        return None
    return hashlib.sha256(f"{payload.get('model')}\n{content}".encode()).hexdigest()


@dataclass(frozen=True)
class Turn:
    """A request's turn at the gate: `first` when it is the one reading a new prefix; `read` says
    the server has read its prompt (a no-op for the others)."""

    first: bool
    read: Callable[[], None]


class PrefixGate:
    """Per server: which prefixes it has read, and who waits for one being read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read: dict[str, threading.Event] = {}

    @contextmanager
    def turn(self, payload: dict[str, Any], wait_s: float) -> Iterator[Turn]:
        """Within: the request may go to the server. The first request of a prefix is let through
        at once, and the others once its `read` is called (or it ended, whatever the outcome); they
        wait at most `wait_s`."""
        key = shared_prefix(payload)
        if key is None:
            yield Turn(False, _nothing)
            return
        with self._lock:
            event = self._read.get(key)
            first = event is None
            if first:
                event = self._read[key] = threading.Event()
        assert event is not None
        if not first:
            event.wait(wait_s)
            yield Turn(False, _nothing)
            return
        try:
            yield Turn(True, event.set)
        finally:
            event.set()  # failed, cut or answered whole: the others go either way


def _nothing() -> None:
    return None
