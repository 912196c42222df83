-- Every quarantined item, newest stage order first within a document.
SELECT doc_id, stage, item_id, error
FROM failures
ORDER BY doc_id, stage, item_id
