-- Removes the dedup row processed.sql claimed only to ask (the event was not applied: it is given up on).
DELETE FROM :schema.processed_events WHERE consumer = $1 AND event_id = $2::uuid
