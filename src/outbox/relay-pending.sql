-- Rows a relay can still publish: everything in the outbox but the rows held behind a refused row of their key.
SELECT count(*) AS n
  FROM :schema.outbox AS o
 WHERE NOT EXISTS (SELECT 1 FROM :schema.outbox_refused AS r WHERE r.shard = o.shard AND r.key = o.key)
