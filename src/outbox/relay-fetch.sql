-- Rows still waiting in the owned shards, oldest first, from seq $3 on (0: all), at most $2 rows and about $4 payload
-- bytes: a row is taken while the rows before it hold less than $4 bytes (the first always), so one chunk never grows
-- past the client's local queue or the embedded log's parameter size whatever the rows weigh. No watermark survives a
-- pass: a late committer is read on a later pass. The payload travels as base64 (1.33x its size, against 2x for
-- bytea's hex). A key with a row set aside (outbox_refused) is held: none of its later rows may overtake it.
SELECT seq, topic, key, headers, encode(payload, 'base64') AS payload, size
  FROM (SELECT seq, topic, key, headers, payload, coalesce(octet_length(payload), 0) AS size,
               sum(coalesce(octet_length(payload), 0)) OVER (ORDER BY seq) AS upto
          FROM :schema.outbox AS o
         WHERE shard = ANY($1::int[]) AND seq >= $3
           AND NOT EXISTS (SELECT 1 FROM :schema.outbox_refused AS r WHERE r.shard = o.shard AND r.key = o.key)
         ORDER BY seq
         LIMIT $2) AS chunk
 WHERE upto - size < $4
 ORDER BY seq
