-- Lines spoken by an entity (any of its names as a cue), in story order.
SELECT s.sentence_id, s.chunk_id, s.section_id, s.char_start, s.char_end, s.speaker, s.text, sec.ordinal
FROM sentences s JOIN sections sec USING (section_id)
WHERE s.speaker IS NOT NULL AND list_contains($names, upper(trim(s.speaker)))
ORDER BY s.ordinal
LIMIT $limit
