-- Everything that happens in one scene or section: events and interactions in order.
SELECT * FROM (
  SELECT e.event_id AS unit_id, 'event' AS kind, e.chunk_id, e.section_id, e.char_start, e.char_end, e.description, sec.ordinal
  FROM events e JOIN sections sec USING (section_id) WHERE sec.ordinal = $ordinal
  UNION ALL
  SELECT i.interaction_id, 'interaction', i.chunk_id, i.section_id, i.char_start, i.char_end, i.description, sec.ordinal
  FROM interactions i JOIN sections sec USING (section_id) WHERE sec.ordinal = $ordinal
)
ORDER BY char_start
LIMIT $limit
