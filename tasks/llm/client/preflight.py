"""Before the first LLM stage of a build: is the server there and does it serve the model?

One request instead of hundreds of failed items: a build whose server is down stops with one
clear line (or, when the user allows it, falls back to the offline heuristics, labelled so).
"""

from __future__ import annotations

from typing import Any

from tasks.llm.client.http import HTTPCallError, display_url, one_line


class LLMUnavailable(RuntimeError):
    """The configured LLM server cannot serve this build."""


def server_problem(client: Any) -> str | None:
    """None when `client`'s server lists its model; otherwise one line saying what is wrong.

    Clients without `list_models` (in-process test doubles) have no server to check."""
    list_models = getattr(client, "list_models", None)
    if list_models is None:
        return None
    where = display_url(getattr(client, "base_url", "")) or "the configured URL"
    try:
        models = list_models()
    except HTTPCallError as exc:
        return f"LLM server at {where} is not reachable: {one_line(str(exc), 200)}"
    if client.model not in models:
        return f"model {client.model!r} is not served at {where} (served: {', '.join(models) or 'none'})"
    return None
