-- Records the schema's shard count on first use ($1, by the first relay to start) and returns the one stored. The
-- second branch sees a value committed before this statement; a racing relay's value is read again by the caller.
WITH inserted AS (
  INSERT INTO :schema.settings (name, value) VALUES ('outbox.shards', $1::text)
  ON CONFLICT (name) DO NOTHING
  RETURNING value
)
SELECT value FROM inserted
UNION ALL
SELECT value FROM :schema.settings WHERE name = 'outbox.shards'
