-- Rows still waiting in the owned shards, oldest first, from seq $3 on (0: all). No watermark survives a pass: a
-- late committer is read on a later pass. The payload travels as base64 (1.33x its size, against 2x for bytea's hex).
-- A key with a row set aside (outbox_refused) is held: none of its later rows may overtake the refused one.
SELECT seq, topic, key, headers, encode(payload, 'base64') AS payload
  FROM :schema.outbox AS o
 WHERE shard = ANY($1::int[]) AND seq >= $3
   AND NOT EXISTS (SELECT 1 FROM :schema.outbox_refused AS r WHERE r.shard = o.shard AND r.key = o.key)
 ORDER BY seq
 LIMIT $2
