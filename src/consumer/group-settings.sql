-- What the consumer group declares about itself: how long it keeps dedup rows (null: forever).
INSERT INTO :schema.consumer_groups (name, dedup_keep_ms) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET dedup_keep_ms = EXCLUDED.dedup_keep_ms, updated_at = now()
