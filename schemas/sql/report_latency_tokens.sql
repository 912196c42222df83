-- Report: answer latency and tokens per question of each run. LLM tokens come from the run's
-- llm_calls partitions (`llm_calls_files` adds each row's file name, which names the run).
WITH answers AS (
    SELECT a.run_id, any_value(a.system) AS system, any_value(a.benchmark) AS benchmark,
           count(DISTINCT a.qid) AS questions,
           quantile_cont(a.latency_ms, 0.5) AS latency_ms_p50,
           quantile_cont(a.latency_ms, 0.95) AS latency_ms_p95,
           avg(a.evidence_tokens) AS evidence_tokens_mean
    FROM qa_answers a JOIN selected_runs USING (run_id)
    WHERE a.status = 'answered' AND a.sample = 0
    GROUP BY a.run_id
), calls AS (
    SELECT regexp_extract(filename, '__answer-(run_[0-9a-f]+)\.parquet$', 1) AS run_id,
           sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)) AS llm_tokens
    FROM llm_calls_files
    GROUP BY 1
)
SELECT answers.*, coalesce(calls.llm_tokens, 0)::DOUBLE / answers.questions AS llm_tokens_per_question
FROM answers LEFT JOIN calls USING (run_id)
ORDER BY benchmark, system
