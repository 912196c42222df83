"""Query and evaluation tables, one partition per run: answers, one trace row per tool call, and
metrics per question type."""

from __future__ import annotations

from schemas.tables.spec import (
    BOARD,
    BOOL,
    FLOAT,
    INT,
    JSON,
    REQUIRED,
    STR,
    STR_LIST,
    TableSpec,
    columns,
    register,
)

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
            ("doc_id", STR, REQUIRED, "Document asked about"),
            ("system", STR, REQUIRED),
            ("sample", INT, REQUIRED),
            ("qtype", STR),
            ("question", STR, REQUIRED, "Question text"),
            ("answer", STR, "Answer text"),
            ("reference", STR, "Reference answer, if the benchmark has one"),
            ("is_offline", BOOL, "True when answered without an LLM"),
            ("chosen_option", INT, "Option index chosen (multiple choice), from 0"),
            ("gold_option", INT, "Correct option index, from 0"),
            ("is_correct_option", BOOL, "chosen_option equals gold_option"),
            ("rouge_l_f1", FLOAT, "ROUGE-L F1 against the best reference"),
            ("rouge_1_f1", FLOAT, "ROUGE-1 F1 against the best reference"),
            ("rouge_2_f1", FLOAT, "ROUGE-2 F1 against the best reference"),
            ("gold_section_ids", STR_LIST, "Sections holding the gold evidence"),
            ("evidence_section_ids", STR_LIST, "Sections cited as evidence"),
            ("evidence_recall", FLOAT, "Share of gold sections among the evidence"),
            ("evidence_tokens", INT, "Tokens of evidence given to the answerer"),
            ("cited_headings", STR_LIST, "Headings of the cited sections"),
            ("latency_ms", FLOAT, "Time to answer in milliseconds"),
            ("status", STR, REQUIRED, "answered, document_missing or error"),
            ("board", BOARD, "Evidence board composition: items, facts, passages and tokens"),
            ("skills", STR_LIST, "Reading-skill cards applied"),
            ("tool_calls", INT, "Tool calls made"),
            ("language", STR, "Language of the document"),
            ("gold_unmapped", STR_LIST,
             "Gold scenes that map to no section (the question is left out of evidence recall)"),
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
            ("call_index", INT, REQUIRED, "Order of the call within the answer, from 0"),
            ("round", INT, REQUIRED, "Planning round of the call, from 0"),
            ("tool", STR, REQUIRED, "Tool name"),
            ("arguments", JSON, "Tool arguments as JSON"),
            ("rows", INT, "Rows the tool returned"),
            ("tokens", INT, "Tokens of the tool's result"),
            ("ms", FLOAT, "Time of the call in milliseconds"),
            ("kinds", STR_LIST, "Kinds of assets returned"),
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
            ("metric", STR, REQUIRED, "Metric name (e.g. accuracy, rouge_l_f1, evidence_recall)"),
            ("value", FLOAT, "Metric value"),
            ("n", INT, REQUIRED, "Questions counted"),
        ),
    )
)
