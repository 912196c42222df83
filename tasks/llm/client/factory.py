"""The LLM client a command or flow injects, built from `[llm]`: none (the embedded default),
one server's client, or several servers' as one routed client."""

from __future__ import annotations

from pathlib import Path

from schemas.config_llm import LLMSettings
from tasks.llm.client.cache import LLMCache
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.routing import RoutedClient


def build_llm_client(
    settings: LLMSettings, api_key: str | None, cache_root: Path | None
) -> OpenAICompatibleClient | RoutedClient | None:
    """The configured client, or None when `settings.url` is unset (the embedded heuristic default);
    with `[llm] endpoints` (or --llm-url given more than once), one client over every server."""
    if not settings.url:
        return None
    clients = endpoint_clients(settings, api_key, cache_root)
    return clients[0] if len(clients) == 1 else RoutedClient(clients)


def endpoint_clients(
    settings: LLMSettings, api_key: str | None, cache_root: Path | None
) -> list[OpenAICompatibleClient]:
    """One client per server (`url`, then `endpoints`), each with its own slots, all sharing one
    reply cache (keyed by what was asked, never by URL)."""
    cache = LLMCache(cache_root) if cache_root is not None else None
    servers = [(settings.url, settings.concurrency)] + [
        (endpoint.url, endpoint.concurrency or settings.concurrency) for endpoint in settings.endpoints
    ]
    return [
        OpenAICompatibleClient(
            settings.model_copy(update={"url": url, "concurrency": slots, "endpoints": []}), api_key, cache
        )
        for url, slots in servers
        if url
    ]
