-- Report: the correctness judge's internal agreement per run (appendix B.3), with its vote counts.
-- Only its label votes count: the rubric judge's votes on long answers (kind 'rubric') are not its
-- votes; a vote stored before `kind` existed is a label vote.
SELECT m.run_id, any_value(m.system) AS system, any_value(m.benchmark) AS benchmark,
       max(m.value) FILTER (WHERE m.metric = 'judged_answers') AS judged_answers,
       max(m.value) FILTER (WHERE m.metric = 'judge_pairwise_agreement') AS pairwise_agreement,
       max(m.value) FILTER (WHERE m.metric = 'judge_alpha') AS krippendorff_alpha,
       (SELECT count(*) FROM judgments j
        WHERE j.run_id = m.run_id AND coalesce(j.kind, 'label') = 'label') AS votes,
       (SELECT any_value(j.judge_model) FROM judgments j
        WHERE j.run_id = m.run_id AND coalesce(j.kind, 'label') = 'label') AS judge_model
FROM eval_metrics m JOIN selected_runs USING (run_id)
WHERE m.qtype = '*'
GROUP BY m.run_id
HAVING max(m.value) FILTER (WHERE m.metric = 'judged_answers') > 0
ORDER BY benchmark, system
