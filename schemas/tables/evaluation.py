"""Evaluation-protocol tables (paper §4, appendix B.2-B.3): the judge's votes (a correct/incorrect
label, or a whole-story answer's rubric scores) and the ablation grid's results. Both are written per
run, like qa_answers."""

from __future__ import annotations

import pyarrow as pa

from schemas.tables.spec import BOOL, FLOAT, INT, STR, TableSpec, register, REQUIRED, columns

JUDGE_KINDS = ("label", "rubric")
# A rubric vote's scores: one per criterion of schemas.responses.judge.RubricReply, with its reason.
RUBRIC = pa.list_(pa.struct([("criterion", STR), ("score", INT), ("reason", STR)]))

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
            ("vote", INT, REQUIRED, "Vote index, from 0"),
            (
                "kind",
                STR,
                REQUIRED,
                "label (a short answer: correct or not) or rubric (a whole-story answer)",
            ),
            ("label", BOOL, "Judge's verdict: correct or not (label votes)"),
            (
                "rubric",
                RUBRIC,
                "Rubric votes: each criterion's score (1-5) and reason; null when the call failed",
            ),
            ("reason", STR, "Label votes: why; any failed vote: the error"),
            ("judge_model", STR, REQUIRED, "Judge model name"),
            ("call_id", STR, "llm_calls.call_key of the vote"),
            ("status", STR, REQUIRED, "ok, cached or failed"),
            ("prompt_hash", STR, "sha256 of the judge prompt"),
        ),
        accepted_values={"status": ("ok", "cached", "failed"), "kind": JUDGE_KINDS},
        invariants=(
            ("a label vote has no rubric", "SELECT * FROM {t} WHERE kind = 'label' AND rubric IS NOT NULL"),
            ("a rubric vote has no label", "SELECT * FROM {t} WHERE kind = 'rubric' AND label IS NOT NULL"),
        ),
    )
)

register(
    TableSpec(
        name="ablation_results",
        grain="one row per (ablation run, setting, benchmark, qtype); qtype '*' is the whole benchmark",
        key=("ablation_id", "setting", "benchmark", "qtype"),
        partition="run",
        fields=columns(
            ("ablation_id", STR, REQUIRED, "Ablation run id"),
            ("setting", STR, REQUIRED, "Ablation setting (e.g. full, saber_raw)"),
            ("benchmark", STR, REQUIRED),
            ("qtype", STR, REQUIRED),
            ("run_id", STR, REQUIRED, "Evaluation run of the setting"),
            ("workspace", STR, "'base' or the build variant's folder"),
            ("n", INT, REQUIRED, "Questions counted"),
            ("samples", INT, REQUIRED, "Samples per question"),
            ("offline", BOOL, REQUIRED, "True when run without an LLM"),
            ("overall", FLOAT, "Overall score"),
            ("overall_source", STR, "Where overall comes from (judge, option accuracy, ...)"),
            ("pass_at_k", FLOAT, "pass@k over the samples"),
            ("evidence_recall", FLOAT, "Mean evidence recall"),
            ("llm_tokens_per_q", FLOAT, "LLM tokens per question"),
            ("evidence_tokens_mean", FLOAT, "Mean evidence tokens"),
            ("latency_ms_p50", FLOAT, "Median latency in milliseconds"),
            ("latency_ms_mean", FLOAT, "Mean latency in milliseconds"),
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
            ("questions_file", STR, REQUIRED, "The questions file's name; its content is questions_sha256"),
            ("questions_sha256", STR, REQUIRED, "sha256 of the questions file the run answered"),
            ("system", STR, REQUIRED),
            ("settings", STR, REQUIRED, "Answering settings that differ from the defaults; '' for none"),
            ("setting", STR, REQUIRED, "The ablation setting; '' for an `nkw eval` run"),
            ("variant", STR, REQUIRED, "The build variant answered over (e.g. saber_raw); '' for the base"),
            ("ablation_id", STR, "The ablation grid the run belongs to, if any"),
            ("question_limit", INT, "--limit of the run (questions per file, in turn per document)"),
            ("samples", INT, REQUIRED, "Answers sampled per question"),
            ("expected", INT, REQUIRED, "Answers the run should hold: questions x samples"),
            ("answered", INT, REQUIRED, "Answers the run holds"),
            ("status", STR, REQUIRED, "complete when every expected answer is there, else incomplete"),
            ("is_offline", BOOL, "True when the answers came without an LLM"),
            ("judge_model", STR, "Model of the correctness judge, if any"),
        ),
        accepted_values={"status": ("complete", "incomplete")},
    )
)
