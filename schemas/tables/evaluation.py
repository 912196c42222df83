"""Evaluation-protocol tables (paper §4, appendix B.2-B.3): the correctness judge's votes and the
ablation grid's results. Both are written per run, like qa_answers."""

from __future__ import annotations

from schemas.tables.spec import BOOL, FLOAT, INT, STR, TableSpec, register, schema

register(
    TableSpec(
        name="judgments",
        grain="one row per judge vote on one sampled answer (votes 0..n-1 of a (run, question, sample))",
        key=("run_id", "qid", "sample", "vote"),
        partition="run",
        schema=schema(
            ("run_id", STR),
            ("benchmark", STR),
            ("qid", STR),
            ("sample", INT),
            ("vote", INT),
            ("label", BOOL),
            ("reason", STR),
            ("judge_model", STR),
            ("call_id", STR),
            ("status", STR),
            ("prompt_hash", STR),
        ),
        not_null=("run_id", "benchmark", "qid", "sample", "vote", "judge_model", "status"),
        accepted_values={"status": ("ok", "cached", "failed")},
    )
)

register(
    TableSpec(
        name="ablation_results",
        grain="one row per (ablation run, setting, benchmark, qtype); qtype '*' is the whole benchmark",
        key=("ablation_id", "setting", "benchmark", "qtype"),
        partition="run",
        schema=schema(
            ("ablation_id", STR),
            ("setting", STR),
            ("benchmark", STR),
            ("qtype", STR),
            ("run_id", STR),
            ("workspace", STR),
            ("n", INT),
            ("samples", INT),
            ("offline", BOOL),
            ("overall", FLOAT),
            ("overall_source", STR),
            ("pass_at_k", FLOAT),
            ("evidence_recall", FLOAT),
            ("llm_tokens_per_q", FLOAT),
            ("evidence_tokens_mean", FLOAT),
            ("latency_ms_p50", FLOAT),
            ("latency_ms_mean", FLOAT),
        ),
        not_null=("ablation_id", "setting", "benchmark", "qtype", "run_id", "n", "samples", "offline"),
    )
)
