-- Takes, for this transaction only, every key shard no other relay holds. One owner per shard keeps per-key order
-- even with several relays; a relay that dies mid-batch releases its shards with its aborted transaction.
SELECT s AS shard
  FROM generate_series(0, $1::int - 1) AS s
 WHERE pg_try_advisory_xact_lock(hashtext($2::text), s)
