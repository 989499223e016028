-- Which consumer groups applied this event (its dedup key), and when: the dedup rows say so.
SELECT consumer, processed_at FROM :schema.processed_events WHERE event_id = $1::uuid ORDER BY consumer
