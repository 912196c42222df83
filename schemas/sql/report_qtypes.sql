-- Report: Overall and evidence recall per question type of each run.
SELECT m.run_id, any_value(m.system) AS system, coalesce(any_value(s.setting), '') AS setting, any_value(m.benchmark) AS benchmark, m.qtype,
       max(m.n) FILTER (WHERE m.metric = 'overall') AS n,
       max(m.value) FILTER (WHERE m.metric = 'overall') AS overall,
       max(m.value) FILTER (WHERE m.metric = 'evidence_recall') AS evidence_recall
FROM eval_metrics m JOIN selected_runs USING (run_id)
LEFT JOIN (SELECT run_id, any_value(setting) AS setting FROM ablation_results GROUP BY run_id) s USING (run_id)
WHERE m.qtype <> '*'
GROUP BY m.run_id, m.qtype
ORDER BY benchmark, system, setting, m.qtype
