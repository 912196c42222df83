-- The sections an entity is mentioned in, with counts: first and last appearance by ordinal.
SELECT m.section_id, sec.ordinal, sec.heading, count(*) AS mentions, min(m.chunk_id) AS chunk_id,
       min(m.char_start) AS char_start, max(m.char_end) AS char_end
FROM mentions m JOIN sections sec USING (section_id)
WHERE m.entity_id = $entity_id
GROUP BY m.section_id, sec.ordinal, sec.heading
ORDER BY sec.ordinal
LIMIT $limit
