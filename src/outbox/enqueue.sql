-- Inserts a batch of encoded events in the caller's transaction, in the order given (seq follows array order), unless
-- the schema stored another shard count than $7 (then nothing is inserted). Returns the stored count (null: none yet).
-- Under REPEATABLE READ or SERIALIZABLE the count is read FOR SHARE: changeShards takes it FOR UPDATE, so such a
-- writer whose snapshot predates a change fails with 40001 instead of inserting under the old count (rows the relays
-- never read). READ COMMITTED writers read it plainly (no row lock on every enqueue): their INSERT waits on
-- changeShards' table lock and its statement sees the count committed before it.
WITH locked AS (
  SELECT value FROM :schema.settings
   WHERE name = 'outbox.shards' AND current_setting('transaction_isolation') <> 'read committed'
     FOR SHARE
), stored AS (
  SELECT value FROM :schema.settings
   WHERE name = 'outbox.shards' AND current_setting('transaction_isolation') = 'read committed'
  UNION ALL
  SELECT value FROM locked
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
