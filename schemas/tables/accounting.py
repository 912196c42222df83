"""Accounting tables every stage may append to, one partition per (document, stage): quarantined
items (`failures`) and every LLM request attempt (`llm_calls`)."""

from __future__ import annotations

from schemas.tables.spec import FLOAT, INT, STR, REQUIRED, TableSpec, columns, register


register(
    TableSpec(
        name="failures",
        grain="one row per quarantined item (a document, chunk or LLM item that could not be processed)",
        key=("doc_id", "stage", "item_id"),
        partition="document_stage",
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("stage", STR, REQUIRED),
            ("item_id", STR, REQUIRED),
            ("error", STR, REQUIRED, "Why the item was quarantined, in one line"),
            ("payload", STR, "Context for the failure: the item's data as JSON, or a short traceback"),
        ),
    )
)


register(
    TableSpec(
        name="llm_calls",
        grain="one row per LLM request attempt (cache hits included, marked status 'cached')",
        key=("stage", "item_id", "call_key", "attempt"),
        partition="document_stage",
        fields=columns(
            ("call_key", STR, REQUIRED,
             "Cache key of the request (hash of model, messages, sampling and response schema)"),
            ("attempt", INT, REQUIRED, "Attempt number of this request, from 1 (retries add rows)"),
            ("doc_id", STR, "Document the call was made for (null for workspace-wide calls)"),
            ("stage", STR, REQUIRED),
            ("item_id", STR, REQUIRED),
            ("prompt_id", STR, "Prompt file used (stage/name)"),
            ("prompt_version", STR, "Version of the prompt file"),
            ("prompt_hash", STR, "sha256 of the rendered prompt template"),
            ("model", STR, "Model name the server reported"),
            ("prompt_tokens", INT, "Prompt tokens billed"),
            ("completion_tokens", INT, "Completion tokens billed"),
            ("cached_prompt_tokens", INT, "Prompt tokens read from the prefix cache (null: not said)"),
            ("latency_ms", FLOAT, "Wall time of the request in milliseconds"),
            ("finish_reason", STR, "Server's finish reason (stop, length, ...)"),
            (
                "status",
                STR,
                REQUIRED,
                "ok, cached, error, invalid, truncated, salvaged (cut, whole items kept), timeout, refused",
            ),
            ("error", STR, "Error message when the attempt failed"),
        ),
        accepted_values={
            "status": ("ok", "cached", "error", "invalid", "truncated", "salvaged", "timeout", "refused")
        },
    )
)
