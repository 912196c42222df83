-- The paper's asset figures per document (appendix B.8). KG edges are the canonical entity
-- relations; refined relations add the links of occasions, which join the graph as
-- contextual nodes tied to their participants and setting.
WITH docs AS (SELECT doc_id FROM documents),
ent AS (SELECT doc_id, count(*) AS n FROM entities GROUP BY doc_id),
rel AS (SELECT doc_id, count(*) AS n FROM relations GROUP BY doc_id),
occ AS (SELECT doc_id, count(*) AS n,
               sum(len(participant_ids) + CASE WHEN setting_id IS NULL THEN 0 ELSE 1 END) AS links
        FROM occasions GROUP BY doc_id),
doc_ent AS (SELECT doc_id, count(DISTINCT (chunk_id, entity_id)) AS n FROM mentions GROUP BY doc_id),
ev AS (SELECT doc_id, count(*) AS n FROM events GROUP BY doc_id),
inter AS (SELECT doc_id, count(*) AS n FROM interactions GROUP BY doc_id),
facts AS (SELECT doc_id, count(*) AS n FROM atomic_facts GROUP BY doc_id),
chunks_n AS (SELECT doc_id, count(*) AS n FROM chunks GROUP BY doc_id)
SELECT d.doc_id,
       coalesce(ent.n, 0) + coalesce(occ.n, 0) AS kg_nodes,
       coalesce(rel.n, 0) AS kg_edges,
       coalesce(rel.n, 0) + coalesce(occ.links, 0) AS refined_relations,
       coalesce(doc_ent.n, 0) AS doc_entity_edges,
       coalesce(chunks_n.n, 0) AS chunks,
       coalesce(ev.n, 0) AS events,
       coalesce(inter.n, 0) AS interactions,
       coalesce(occ.n, 0) AS occasions,
       coalesce(facts.n, 0) AS facts
FROM docs d
LEFT JOIN ent USING (doc_id) LEFT JOIN rel USING (doc_id) LEFT JOIN occ USING (doc_id)
LEFT JOIN doc_ent USING (doc_id) LEFT JOIN ev USING (doc_id) LEFT JOIN inter USING (doc_id)
LEFT JOIN facts USING (doc_id) LEFT JOIN chunks_n USING (doc_id)
ORDER BY d.doc_id
