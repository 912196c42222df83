-- Directed interactions between two entities, either direction, in story order.
SELECT i.interaction_id, i.chunk_id, i.section_id, i.char_start, i.char_end, i.subject_id, i.object_ids,
       i.interaction_type, i.description, sec.ordinal
FROM interactions i JOIN sections sec USING (section_id)
WHERE (i.subject_id = $a AND list_contains(i.object_ids, $b)) OR (i.subject_id = $b AND list_contains(i.object_ids, $a))
ORDER BY sec.ordinal, i.char_start
LIMIT $limit
