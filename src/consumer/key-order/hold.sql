-- Holds a key behind the record now in retry or dead (a later holder of the same key takes its place).
INSERT INTO :schema.key_holds (consumer, topic, key, holder_event_id) VALUES ($1, $2, $3, $4)
ON CONFLICT (consumer, topic, key)
DO UPDATE SET holder_event_id = EXCLUDED.holder_event_id, status = 'held', held_at = now()
