-- The shard count every writer and relay of this schema must use (none before the first relay start).
SELECT value FROM :schema.settings WHERE name = 'outbox.shards'
