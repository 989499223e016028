-- Which of the given event ids the group has already claimed as applied (a copy of one would be skipped as a duplicate).
SELECT event_id::text AS id FROM :schema.processed_events WHERE consumer = $1 AND event_id = ANY($2::uuid[])
