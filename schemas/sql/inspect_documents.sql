-- One row per built document, in id order.
SELECT doc_id, title, kind, language, n_words, n_chars, source
FROM documents
ORDER BY doc_id
