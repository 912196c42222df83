-- Report: Overall and Pass@k per run (system x benchmark), with evidence recall and MCQ accuracy.
-- Reads `selected_runs(run_id)`, registered by the report.
SELECT m.run_id, any_value(m.system) AS system, coalesce(any_value(s.setting), '') AS setting, any_value(m.benchmark) AS benchmark,
       max(m.n) FILTER (WHERE m.metric = 'overall') AS n,
       max(m.value) FILTER (WHERE m.metric = 'overall') AS overall,
       max(m.value) FILTER (WHERE m.metric = 'pass_at_k') AS pass_at_k,
       max(m.value) FILTER (WHERE m.metric = 'evidence_recall') AS evidence_recall,
       max(m.value) FILTER (WHERE m.metric = 'mcq_accuracy') AS mcq_accuracy,
       (SELECT max(a.sample) + 1 FROM qa_answers a WHERE a.run_id = m.run_id) AS samples,
       (SELECT bool_and(coalesce(a.is_offline, true)) FROM qa_answers a WHERE a.run_id = m.run_id) AS offline
FROM eval_metrics m JOIN selected_runs USING (run_id)
LEFT JOIN (SELECT run_id, any_value(setting) AS setting FROM ablation_results GROUP BY run_id) s USING (run_id)
WHERE m.qtype = '*'
GROUP BY m.run_id
ORDER BY benchmark, system, setting, m.run_id
