-- Inserts a batch of encoded events in the caller's transaction, in the order given (seq follows array order), unless
-- the schema stored another shard count than $7 (then nothing is inserted). Returns the stored count (null: none yet).
-- The count is read FOR SHARE: changeShards updates it under FOR UPDATE, so a writer waits for a change in progress and
-- then reads the new count (READ COMMITTED), or fails with 40001 when its REPEATABLE READ / SERIALIZABLE snapshot
-- predates the change (it would otherwise insert under the old count, rows the relays never read). Shared locks do not
-- hold writers up against one another.
WITH stored AS (
  SELECT value FROM :schema.settings WHERE name = 'outbox.shards' FOR SHARE
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
