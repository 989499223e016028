-- Waits for the relay pass that owns these rows' shards and keeps relays off them until this transaction ends, so a
-- pass never reads a key half released (its later rows without the refused one put back before them).
SELECT pg_advisory_xact_lock(hashtext($2::text), shard)
  FROM (SELECT DISTINCT shard FROM :schema.outbox_refused WHERE seq = ANY($1::bigint[]) ORDER BY shard) AS s
