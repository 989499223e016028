-- Takes, for this transaction only, every key shard no other relay holds. One owner per shard keeps per-key order
-- even with several relays; a relay that dies mid-batch releases its shards with its aborted transaction.
-- A row with shard -1 carries the schema's stored shard count when it differs from the relay's ($1): nothing is taken.
WITH stored AS (
  SELECT value FROM :schema.settings WHERE name = 'outbox.shards'
)
SELECT s AS shard, NULL AS stored
  FROM generate_series(0, $1::int - 1) AS s
 WHERE NOT EXISTS (SELECT 1 FROM stored WHERE value <> $1::text)
   AND pg_try_advisory_xact_lock(hashtext($2::text), s)
UNION ALL
SELECT -1, value FROM stored WHERE value <> $1::text
