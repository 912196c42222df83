"""LLM option admission for multiple-choice answers (paper appendix A.4): before the final
answer, the model audits every option against the evidence with the `admit_options` prompt; the
verdicts are handed to the final-answer model beside the reading skills. A failed or unusable
audit reply falls back to the offline verdicts inside `admit_options_llm`."""

from __future__ import annotations

from typing import Any, Callable

from tasks.query.evidence.board import EvidenceBoard
from tasks.query.options.admission import EvidenceSnippet, OptionVerdict, admit_options_llm
from tasks.query.plan import QueryIntents
from tasks.query.reader.offline import rank_sentences
from tasks.query.tools.env import ToolEnv

OptionAudit = Callable[[ToolEnv, str, list[str], QueryIntents, EvidenceBoard], str]
HEADER = {
    "en": "Option audit (each option checked against the evidence; advisory):",
    "zh": "选项核查（逐项对照证据的判断，仅供参考）：",
}


def option_snippets(
    env: ToolEnv, question: str, intents: QueryIntents, board: EvidenceBoard, sentences_limit: int = 40
) -> list[EvidenceSnippet]:
    """Ranked source sentences of the board's passages, then its structured items and facts."""
    sentences = env.store.source.sentences
    vectors = env.store.source.sentence_vectors
    snippets = [
        EvidenceSnippet(
            sentences.iloc[p]["sentence_id"],
            sentences.iloc[p]["text"],
            sentences.iloc[p]["section_id"],
            "sentence",
            score,
            vectors[p] if vectors.shape[1] > 1 else None,
        )
        for p, score in rank_sentences(env, question, intents, board)[:sentences_limit]
    ]
    for items in (board.entities, board.narrative, board.relations):
        for item in items:
            for row in [item.row, *item.facts]:
                snippets.append(
                    EvidenceSnippet(
                        row.item_id,
                        row.text,
                        row.section_id,
                        row.kind,
                        row.score,
                        env.store.asset_vector(row.kind, row.item_id),
                    )
                )
    return snippets


def format_verdicts(verdicts: list[OptionVerdict], language: str) -> str:
    lines = [HEADER.get(language, HEADER["en"])]
    lines += [f"- {chr(65 + v.option_index)}: {v.verdict} — {v.reason}" for v in verdicts]
    return "\n".join(lines)


def make_option_audit(client: Any, request_factory: Callable[[str, dict[str, Any], str], Any]) -> OptionAudit:
    """An audit for one question: LLM verdicts per option, rendered for the final-answer prompt."""

    def audit(
        env: ToolEnv, question: str, options: list[str], intents: QueryIntents, board: EvidenceBoard
    ) -> str:
        snippets = option_snippets(env, question, intents, board)
        verdicts = admit_options_llm(
            client,
            lambda pid, values: request_factory(pid, values, "admit_options"),
            question,
            options,
            snippets,
            env.embed_texts,
        )
        return format_verdicts(verdicts, env.store.source.language)

    return audit
