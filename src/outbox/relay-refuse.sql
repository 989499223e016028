-- Sets aside one row the transport refused for good: moved, with its seq, from the outbox to outbox_refused.
WITH moved AS (
  DELETE FROM :schema.outbox WHERE seq = $1 RETURNING *
)
INSERT INTO :schema.outbox_refused (seq, id, topic, key, shard, headers, payload, created_at, error_code, reason)
SELECT seq, id, topic, key, shard, headers, payload, created_at, $2, $3 FROM moved
RETURNING seq, id::text AS id, topic, key
