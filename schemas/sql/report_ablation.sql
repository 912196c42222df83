-- Report: the ablation table (whole benchmarks) with each setting's change against `full`.
WITH latest AS (
    SELECT ablation_id FROM ablation_results GROUP BY ablation_id ORDER BY count(*) DESC, ablation_id LIMIT 1
), rows AS (
    SELECT r.* FROM ablation_results r
    WHERE r.qtype = '*' AND r.ablation_id = coalesce((SELECT any_value(id) FROM selected_ablation), (SELECT ablation_id FROM latest))
)
SELECT r.ablation_id, r.setting, r.run_id, r.workspace, r.benchmark, r.n, r.samples, r.offline, r.overall, r.overall_source, r.pass_at_k,
       r.evidence_recall, r.llm_tokens_per_q, r.evidence_tokens_mean, r.latency_ms_p50,
       r.overall - f.overall AS overall_delta, r.pass_at_k - f.pass_at_k AS pass_at_k_delta,
       r.evidence_recall - f.evidence_recall AS evidence_recall_delta
FROM rows r LEFT JOIN rows f ON f.setting = 'full' AND f.benchmark = r.benchmark
ORDER BY r.benchmark, r.setting
