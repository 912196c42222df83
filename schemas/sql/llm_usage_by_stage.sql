-- LLM requests, cache hits and tokens per stage.
SELECT stage,
       count(*) FILTER (WHERE status <> 'cached') AS calls,
       count(*) FILTER (WHERE status = 'cached') AS cached,
       sum(prompt_tokens) AS prompt_tokens,
       sum(completion_tokens) AS completion_tokens,
       count(*) FILTER (WHERE status NOT IN ('ok', 'cached')) AS failed
FROM llm_calls
GROUP BY stage
ORDER BY stage
