-- The rows of the slot's exported snapshot (committed before its consistent point, never streamed), after seq $1,
-- oldest first, at most $2; keys held behind a refused row are skipped (they wait in the table).
SELECT seq, topic, key, headers, encode(payload, 'base64') AS payload, coalesce(octet_length(payload), 0) AS size
  FROM :schema.outbox AS o
 WHERE seq > $1
   AND NOT EXISTS (SELECT 1 FROM :schema.outbox_refused AS r WHERE r.key = o.key)
 ORDER BY seq
 LIMIT $2
