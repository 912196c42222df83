"""What a client learns about its server, once: the context one request may fill (the setting,
else what GET /v1/models reports) and how many requests it decodes at once (llama.cpp's GET /props),
and from them whether a request fits and how many go out together."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

import httpx

from schemas.config_llm import LLMSettings
from tasks.llm.client.http import HTTPCallError, get_model_contexts, server_slots
from tasks.llm.client.pool import ServerPool
from tasks.llm.client.replies import prompt_chars

log = logging.getLogger(__name__)

MIN_REPLY_TOKENS = 64  # a request leaving less room than this for its reply is not sent
CONTEXT_MARGIN_TOKENS = 32  # slack for our prompt-size estimate (a re-ask adds its own messages)
TEMPLATE_TOKENS = 8  # the chat template's tokens around each message


class ServerFit:
    """The server's context and slots as one client of it sees them (see module doc)."""

    def __init__(
        self,
        settings: LLMSettings,
        http: httpx.Client,
        base_url: str,
        headers: dict[str, str],
        pool: ServerPool,
        clean: Callable[[str], str],
    ) -> None:
        self.settings, self.http, self.base_url, self.headers = settings, http, base_url, headers
        self.pool, self.clean = pool, clean  # `clean` takes the API key out of a message
        self._lock = threading.Lock()
        self._read = False
        self._tokens: int | None = None

    def context(self) -> int | None:
        """Prompt + reply tokens per request: the setting, else what GET /models reports (read once)."""
        if self.settings.context_tokens:
            return self.settings.context_tokens
        with self._lock:
            if not self._read:
                self._read = True
                try:
                    with self.pool.slot():
                        timeout = min(self.settings.timeout_s, 30.0)
                        contexts = get_model_contexts(self.http, self.base_url, self.headers, timeout)
                    self._tokens = contexts.get(self.settings.model)
                except HTTPCallError as exc:  # unknown: requests go out unclamped, as before
                    log.info("llm: GET /models failed, context length unknown: %s", self.clean(str(exc)))
            return self._tokens

    def prompt_tokens(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        return self.pool.pacing.prompt_tokens(prompt_chars(messages, tools)) + TEMPLATE_TOKENS * len(messages)

    def reply_room(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int | None:
        """Tokens left for the reply once the prompt is in the context; None when the context is unknown."""
        context = self.context()
        if context is None:
            return None
        return context - self.prompt_tokens(messages, tools) - CONTEXT_MARGIN_TOKENS

    def learn_slots(self) -> None:
        """Once per server: fewer requests in flight when it decodes fewer at once than configured
        (llama.cpp says so in /props), so none waits silently in its queue; and whether it is
        llama.cpp, whose schema converter keeps string lengths."""
        pool = self.pool
        if pool.slots_read or pool.remote is not None:
            return
        with pool.learning:  # every request waits for the answer: none goes out beyond the slots
            if pool.slots_read:
                return
            timeout = min(self.settings.timeout_s, 10.0)
            slots = server_slots(self.http, self.base_url, self.headers, timeout)
            pool.keeps_string_lengths = slots is not None  # llama.cpp's converter takes maxLength
            if slots is not None and slots < pool.limit:
                log.info("llm: %s decodes %d request(s) at once; %d in flight", self.base_url, slots, slots)
                pool.narrow(slots)
            pool.slots_read = True
