-- Inserts a batch of encoded events in the caller's transaction, in the order given (seq follows array order), unless
-- the schema stored another shard count than $7 (then nothing is inserted). Returns the stored count (null: none yet).
-- Read committed: the INSERT's lock on the outbox waits for a changeShards in progress, and the statement's snapshot,
-- taken after that wait, sees the new count. Repeatable read and serializable: the snapshot is the transaction's, and
-- may predate a committed changeShards, so the setting is read FOR SHARE: locking a row version that a later commit
-- replaced fails with a serialization failure (40001), which the caller retries and then sees the new count. (FOR KEY
-- SHARE is not enough: changeShards does not change the key, and PostgreSQL 15 returns the stale value, no error. A
-- lock the writer takes, advisory or on the table, cannot help either: its snapshot is older than the lock.) Only
-- those levels lock it: at read committed, every writer locking this one row would contend on it for nothing.
WITH stored AS (
  SELECT value FROM :schema.settings
   WHERE name = 'outbox.shards' AND current_setting('transaction_isolation') = 'read committed'
  UNION ALL
  SELECT value FROM (
    SELECT value FROM :schema.settings
     WHERE name = 'outbox.shards' AND current_setting('transaction_isolation') <> 'read committed'
       FOR SHARE
  ) AS locked
), inserted AS (
  INSERT INTO :schema.outbox (id, topic, key, shard, headers, payload)
  SELECT id, topic, key, shard, headers, payload
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::jsonb[], $6::bytea[])
         WITH ORDINALITY AS e(id, topic, key, shard, headers, payload, n)
   WHERE NOT EXISTS (SELECT 1 FROM stored WHERE value <> $7::text)
   ORDER BY n
  RETURNING 1
)
SELECT (SELECT value FROM stored) AS stored, (SELECT count(*) FROM inserted) AS inserted
