-- One document's rows of one table, as the query-time store loads them ({table} and {columns}
-- come from the table registry, never from user input). Insertion order is preserved.
SELECT {columns} FROM {table} WHERE doc_id = $doc_id
