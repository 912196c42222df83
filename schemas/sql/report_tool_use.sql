-- Report: tool calls per question of each run (sample 0), from qa_traces.
SELECT t.run_id, t.tool, count(*) AS calls,
       count(*)::DOUBLE / count(DISTINCT t.qid) AS calls_per_question
FROM qa_traces t
JOIN selected_runs s ON s.run_id = t.run_id
WHERE t.sample = 0
GROUP BY t.run_id, t.tool
ORDER BY t.run_id, calls DESC, t.tool
