-- Report: tool calls per question by system and benchmark (sample 0), from qa_traces.
SELECT a.system, a.benchmark, t.tool, count(*) AS calls,
       count(*)::DOUBLE / count(DISTINCT a.qid) AS calls_per_question
FROM qa_traces t
JOIN qa_answers a ON a.run_id = t.run_id AND a.qid = t.qid AND a.sample = t.sample
JOIN selected_runs s ON s.run_id = t.run_id
WHERE t.sample = 0
GROUP BY a.system, a.benchmark, t.tool
ORDER BY a.system, a.benchmark, calls DESC, t.tool
