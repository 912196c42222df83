"""Evaluation-protocol tables (paper §4, appendix B.2-B.3): the correctness judge's votes and the
ablation grid's results. Both are written per run, like qa_answers."""

from __future__ import annotations

from schemas.tables.spec import BOOL, FLOAT, INT, STR, TableSpec, register, REQUIRED, columns

register(
    TableSpec(
        name="judgments",
        grain="one row per judge vote on one sampled answer (votes 0..n-1 of a (run, question, sample))",
        key=("run_id", "qid", "sample", "vote"),
        partition="run",
        fields=columns(
            ("run_id", STR, REQUIRED),
            ("benchmark", STR, REQUIRED),
            ("qid", STR, REQUIRED),
            ("sample", INT, REQUIRED),
            ("vote", INT, REQUIRED),
            ("label", BOOL),
            ("reason", STR),
            ("judge_model", STR, REQUIRED),
            ("call_id", STR),
            ("status", STR, REQUIRED),
            ("prompt_hash", STR),
        ),
        accepted_values={"status": ("ok", "cached", "failed")},
    )
)

register(
    TableSpec(
        name="ablation_results",
        grain="one row per (ablation run, setting, benchmark, qtype); qtype '*' is the whole benchmark",
        key=("ablation_id", "setting", "benchmark", "qtype"),
        partition="run",
        fields=columns(
            ("ablation_id", STR, REQUIRED),
            ("setting", STR, REQUIRED),
            ("benchmark", STR, REQUIRED),
            ("qtype", STR, REQUIRED),
            ("run_id", STR, REQUIRED),
            ("workspace", STR),
            ("n", INT, REQUIRED),
            ("samples", INT, REQUIRED),
            ("offline", BOOL, REQUIRED),
            ("overall", FLOAT),
            ("overall_source", STR),
            ("pass_at_k", FLOAT),
            ("evidence_recall", FLOAT),
            ("llm_tokens_per_q", FLOAT),
            ("evidence_tokens_mean", FLOAT),
            ("latency_ms_p50", FLOAT),
            ("latency_ms_mean", FLOAT),
        ),
    )
)

register(
    TableSpec(
        name="eval_runs",
        grain="one row per evaluation run (an `nkw eval`, or one setting of an `nkw ablate` grid); written "
        "when the run starts (incomplete) and again when it ends. Clocks live in runs/<run_id>.json",
        key=("run_id",),
        partition="run",
        fields=columns(
            ("run_id", STR, REQUIRED),
            ("benchmark", STR, REQUIRED),
            ("questions_file", STR, REQUIRED),  # the file's name; its content is questions_sha256
            ("questions_sha256", STR, REQUIRED),
            ("system", STR, REQUIRED),
            ("settings", STR, REQUIRED),  # answering settings that differ from the defaults; '' for none
            ("setting", STR, REQUIRED),  # the ablation setting; '' for an `nkw eval` run
            ("variant", STR, REQUIRED),  # the build variant answered over (e.g. saber_raw); '' for the base
            ("ablation_id", STR),
            ("question_limit", INT),
            ("samples", INT, REQUIRED),
            ("expected", INT, REQUIRED),  # questions x samples
            ("answered", INT, REQUIRED),
            ("status", STR, REQUIRED),
            ("is_offline", BOOL),
            ("judge_model", STR),
        ),
        accepted_values={"status": ("complete", "incomplete")},
    )
)
