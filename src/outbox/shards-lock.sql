-- changeShards' first step: the stored count FOR UPDATE, so every writer that read it (FOR SHARE, enqueue.sql) has
-- ended and every later one waits for the change.
SELECT 1 FROM :schema.settings WHERE name = 'outbox.shards' FOR UPDATE
