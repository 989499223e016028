-- Puts set-aside rows back into the outbox with their own seq: older than the rows of their key held behind them, so
-- the relay publishes them first, in the original order.
WITH back AS (
  DELETE FROM :schema.outbox_refused WHERE seq = ANY($1::bigint[]) RETURNING *
)
INSERT INTO :schema.outbox (seq, id, topic, key, shard, headers, payload, created_at)
OVERRIDING SYSTEM VALUE
SELECT seq, id, topic, key, shard, headers, payload, created_at FROM back ORDER BY seq
RETURNING seq
