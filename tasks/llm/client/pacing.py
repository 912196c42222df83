"""What a server's replies have shown about it: how fast it writes, and how many characters of
our prompts make one of its tokens. Both size the next request.

A fixed per-request timeout either cancels a slow server's work in progress (a small model on
a CPU writes ~10 tokens/s: a 1,200-token reply needs two minutes) or waits far too long on a
fast one. So the timeout of a request is the time its reply limit takes at the speed measured
on earlier replies, with slack, never below the configured floor. Until a reply has been
measured the floor applies alone.
"""

from __future__ import annotations

import math
import threading
from collections import deque

SLACK = 1.5  # a reply may come this much slower than the measured average
WINDOW = 32  # replies the speed is measured over (recent ones: the server's load changes)
DEFAULT_CHARS_PER_TOKEN = 3.0  # conservative for English with a BPE vocabulary (~4 is typical)
MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN = 1.0, 6.0
EVIDENCE_TOKENS = 256  # reply tokens measured before the speed caps a reply limit


class Pacing:
    """Per server: tokens per second of whole requests, and characters per prompt token."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replies: deque[tuple[int, float]] = deque(maxlen=WINDOW)  # (completion tokens, seconds)
        self._prompts: deque[tuple[int, int]] = deque(maxlen=WINDOW)  # (characters, prompt tokens)

    def observe(
        self, completion_tokens: int | None, seconds: float, prompt_chars: int, prompt_tokens: int | None
    ) -> None:
        """Record one answered request (its whole time at the server, queueing included)."""
        with self._lock:
            if completion_tokens and completion_tokens > 0 and seconds > 0:
                self._replies.append((completion_tokens, seconds))
            if prompt_tokens and prompt_tokens > 0 and prompt_chars > 0:
                self._prompts.append((prompt_chars, prompt_tokens))

    def tokens_per_second(self) -> float | None:
        """Completion tokens per second over the recent replies; None before the first one."""
        with self._lock:
            tokens = sum(t for t, _ in self._replies)
            seconds = sum(s for _, s in self._replies)
        return tokens / seconds if tokens and seconds > 0 else None

    def affordable_tokens(self, seconds: float) -> int | None:
        """The longest reply the server writes in `seconds` at its measured speed (with slack); None
        until replies of `EVIDENCE_TOKENS` in all were measured (a few short ones measure the
        request's overhead, not the writing). A longer limit would only be cut by the deadline."""
        with self._lock:
            tokens = sum(t for t, _ in self._replies)
        rate = self.tokens_per_second()
        return None if rate is None or tokens < EVIDENCE_TOKENS else int(rate * seconds / SLACK)

    def timeout_for(self, max_tokens: int, floor_s: float) -> float:
        """Seconds to allow a request whose reply may be `max_tokens` long."""
        rate = self.tokens_per_second()
        return floor_s if rate is None else max(floor_s, SLACK * max_tokens / rate)

    def chars_per_token(self) -> float:
        """Characters of our prompts per prompt token, the smallest ratio seen (so estimates err high)."""
        with self._lock:
            ratios = [chars / tokens for chars, tokens in self._prompts]
        if not ratios:
            return DEFAULT_CHARS_PER_TOKEN
        return min(max(min(ratios), MIN_CHARS_PER_TOKEN), MAX_CHARS_PER_TOKEN)

    def prompt_tokens(self, chars: int) -> int:
        """An upper estimate of the tokens a prompt of `chars` characters takes."""
        return math.ceil(chars / self.chars_per_token())
