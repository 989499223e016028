-- Rows still waiting in the owned shards, oldest first, from seq $3 on (0: all). No watermark survives a pass: a
-- late committer is read on a later pass. The payload travels as base64 (1.33x its size, against 2x for bytea's hex).
SELECT seq, topic, key, headers, encode(payload, 'base64') AS payload
  FROM :schema.outbox
 WHERE shard = ANY($1::int[]) AND seq >= $3
 ORDER BY seq
 LIMIT $2
