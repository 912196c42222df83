"""Query decomposition by the LLM (paper appendix A.2, step 1): the model names the entities
and evidence needs of a question; the offline reading fills in and stands in on failure."""

from __future__ import annotations

from typing import Any, Callable

from schemas.responses.agent import QueryDecomposition
from tasks.query.plan import QueryIntents, decompose
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.graph import find_entities_in_text

PROMPT_ID = "decompose_query/v1"


def make_llm_decomposer(client: Any, request_factory: Callable[..., Any]) -> Callable[..., QueryIntents]:
    """A decomposer with the signature of `tasks.query.plan.decompose`."""

    def decompose_with_llm(env: ToolEnv, question: str, options: list[str] | None = None) -> QueryIntents:
        offline = decompose(env, question, options)
        values = {
            "title": env.store.source.title,
            "question": question,
            "answer_format": "multiple choice" if options else "free text",
        }
        result = client.structured(request_factory(PROMPT_ID, values, "decompose"), QueryDecomposition)
        if result.value is None:
            offline.reader = f"offline (LLM reading failed: {result.status})"
            return offline
        reply: QueryDecomposition = result.value
        named = [entity_id for name in reply.entities for entity_id in find_entities_in_text(env, name)]
        entity_ids = list(dict.fromkeys(offline.entity_ids + named))
        return QueryIntents(
            question,
            offline.form,
            entity_ids,
            offline.needs | set(reply.needs),
            answer_slot=reply.answer_slot,
            reader="llm",
            shape=offline.shape,
            scope=offline.scope,  # whole story or local: read from the wording, as offline
        )

    return decompose_with_llm
