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
            ("error", STR, REQUIRED),
            ("payload", STR),
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
            ("call_key", STR, REQUIRED),
            ("attempt", INT, REQUIRED),
            ("doc_id", STR),
            ("stage", STR, REQUIRED),
            ("item_id", STR, REQUIRED),
            ("prompt_id", STR),
            ("prompt_version", STR),
            ("prompt_hash", STR),
            ("model", STR),
            ("prompt_tokens", INT),
            ("completion_tokens", INT),
            ("latency_ms", FLOAT),
            ("finish_reason", STR),
            ("status", STR, REQUIRED),
            ("error", STR),
        ),
        accepted_values={"status": ("ok", "cached", "error", "invalid", "truncated", "timeout", "refused")},
    )
)
