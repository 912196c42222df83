-- Report: every selected run as eval_runs records it (questions file and hash, system, settings,
-- samples, ablation setting, build variant, answered of expected). Runs stored before eval_runs
-- existed are described from their answers alone.
SELECT r.run_id, r.benchmark, r.questions_file, r.questions_sha256, r.system, r.settings, r.setting,
       r.variant, r.ablation_id, r.question_limit, r.samples, r.expected, r.answered, r.status,
       r.is_offline, r.judge_model
FROM eval_runs r JOIN selected_runs USING (run_id)
UNION ALL
SELECT a.run_id, any_value(a.benchmark), NULL, NULL, any_value(a.system), NULL,
       coalesce((SELECT any_value(x.setting) FROM ablation_results x WHERE x.run_id = a.run_id), ''), '', NULL,
       NULL, max(a.sample) + 1, count(*), count(*) FILTER (WHERE a.status = 'answered'),
       CASE WHEN count(*) FILTER (WHERE a.status <> 'answered') = 0 THEN 'complete' ELSE 'incomplete' END,
       bool_and(coalesce(a.is_offline, true)), NULL
FROM qa_answers a JOIN selected_runs USING (run_id)
WHERE a.run_id NOT IN (SELECT run_id FROM eval_runs)
GROUP BY a.run_id
ORDER BY 2, 1
