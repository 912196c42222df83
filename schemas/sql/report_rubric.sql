-- Report: the rubric judge's scores of whole-story (long) answers per run, for the whole benchmark
-- (qtype '*'): answers judged, each criterion (the median of an answer's votes, 1-5, averaged over the
-- judged answers), the 0-1 score, and ROUGE-1/2/L F1 against the best reference (over every answered
-- question of the run; NULL for runs stored before ROUGE-1/2). A run without rubric votes has no row.
SELECT m.run_id, any_value(m.system) AS system, any_value(m.benchmark) AS benchmark,
       max(m.value) FILTER (WHERE m.metric = 'rubric_judged_answers') AS judged_answers,
       max(m.value) FILTER (WHERE m.metric = 'rubric_coverage') AS coverage,
       max(m.value) FILTER (WHERE m.metric = 'rubric_faithfulness') AS faithfulness,
       max(m.value) FILTER (WHERE m.metric = 'rubric_coherence') AS coherence,
       max(m.value) FILTER (WHERE m.metric = 'rubric_score') AS score,
       max(m.value) FILTER (WHERE m.metric = 'rouge_1_f1') AS rouge_1_f1,
       max(m.value) FILTER (WHERE m.metric = 'rouge_2_f1') AS rouge_2_f1,
       max(m.value) FILTER (WHERE m.metric = 'rouge_l_f1') AS rouge_l_f1,
       (SELECT string_agg(DISTINCT j.judge_model, ', ' ORDER BY j.judge_model) FROM judgments j
        WHERE j.run_id = m.run_id AND j.kind = 'rubric') AS judge_model
FROM eval_metrics m JOIN selected_runs USING (run_id)
WHERE m.qtype = '*'
GROUP BY m.run_id
HAVING max(m.value) FILTER (WHERE m.metric = 'rubric_judged_answers') > 0
ORDER BY benchmark, system
