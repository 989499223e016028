-- The consumer groups that declared themselves (at start) and how long each keeps its dedup rows (null: forever).
SELECT name, dedup_keep_ms::text AS keep_ms FROM :schema.consumer_groups ORDER BY name
