-- Holds a key behind the record now in retry or dead. An existing hold keeps its holder while it is held (a record
-- that could not even be decoded does not take the place of the one in retry); a released hold takes the new holder
-- (a parked record that failed in the drain).
INSERT INTO :schema.key_holds (consumer, topic, key, holder_event_id) VALUES ($1, $2, $3, $4)
ON CONFLICT (consumer, topic, key)
DO UPDATE SET holder_event_id = EXCLUDED.holder_event_id, status = 'held', held_at = now()
 WHERE key_holds.status = 'released'
