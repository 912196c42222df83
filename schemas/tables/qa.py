"""Query and evaluation tables, one partition per run: answers, one trace row per tool call, and
metrics per question type."""

from __future__ import annotations

from schemas.tables.spec import BOOL, FLOAT, INT, STR, STR_LIST, REQUIRED, TableSpec, columns, register


register(
    TableSpec(
        name="qa_answers",
        grain="one row per (run, question, sample): an answer with its evidence and scores",
        key=("run_id", "qid", "sample"),
        partition="run",
        fields=columns(
            ("run_id", STR, REQUIRED),
            ("benchmark", STR, REQUIRED),
            ("qid", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("system", STR, REQUIRED),
            ("sample", INT, REQUIRED),
            ("qtype", STR),
            ("question", STR, REQUIRED),
            ("answer", STR),
            ("reference", STR),
            ("is_offline", BOOL),
            ("chosen_option", INT),
            ("gold_option", INT),
            ("is_correct_option", BOOL),
            ("rouge_l_f1", FLOAT),
            ("gold_section_ids", STR_LIST),
            ("evidence_section_ids", STR_LIST),
            ("evidence_recall", FLOAT),
            ("evidence_tokens", INT),
            ("cited_headings", STR_LIST),
            ("latency_ms", FLOAT),
            ("status", STR, REQUIRED),
            ("board_json", STR),
            ("skills", STR_LIST),
            ("tool_calls", INT),
            # the document's language, and the gold scenes that could not be mapped to sections (the
            # question is then left out of evidence recall and reported)
            ("language", STR),
            ("gold_unmapped", STR_LIST),
        ),
        accepted_values={"status": ("answered", "document_missing", "error")},
    )
)


register(
    TableSpec(
        name="qa_traces",
        grain="one row per tool call made while answering a question",
        key=("run_id", "qid", "sample", "call_index"),
        partition="run",
        fields=columns(
            ("run_id", STR, REQUIRED),
            ("qid", STR, REQUIRED),
            ("sample", INT, REQUIRED),
            ("call_index", INT, REQUIRED),
            ("round", INT, REQUIRED),
            ("tool", STR, REQUIRED),
            ("arguments", STR),
            ("rows", INT),
            ("tokens", INT),
            ("ms", FLOAT),
            ("kinds", STR_LIST),
        ),
    )
)


register(
    TableSpec(
        name="eval_metrics",
        grain="one row per (run, qtype, metric); qtype '*' is the whole benchmark",
        key=("run_id", "qtype", "metric"),
        partition="run",
        fields=columns(
            ("run_id", STR, REQUIRED),
            ("benchmark", STR, REQUIRED),
            ("system", STR, REQUIRED),
            ("qtype", STR, REQUIRED),
            ("metric", STR, REQUIRED),
            ("value", FLOAT),
            ("n", INT, REQUIRED),
        ),
    )
)
