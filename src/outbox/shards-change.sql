-- Stores a new shard count only when no outbox row waits (nor is set aside); returns how many rows wait.
WITH waiting AS (
  SELECT (SELECT count(*) FROM :schema.outbox) + (SELECT count(*) FROM :schema.outbox_refused) AS n
), changed AS (
  INSERT INTO :schema.settings (name, value)
  SELECT 'outbox.shards', $1::text FROM waiting WHERE n = 0
  ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
)
SELECT n AS waiting FROM waiting
