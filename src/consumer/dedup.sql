-- Claims a batch's event ids for one consumer in one round trip; returns only the ids never seen before.
INSERT INTO :schema.processed_events (consumer, event_id)
SELECT $1, unnest($2::uuid[])
ON CONFLICT DO NOTHING
RETURNING event_id::text AS event_id
