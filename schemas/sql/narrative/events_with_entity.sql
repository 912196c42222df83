-- Events an entity participates in, in story order.
SELECT e.event_id, e.chunk_id, e.section_id, e.char_start, e.char_end, e.event_type, e.description, e.time_cue, sec.ordinal
FROM events e JOIN sections sec USING (section_id)
WHERE list_contains(e.participant_ids, $entity_id)
ORDER BY sec.ordinal, e.char_start
LIMIT $limit
