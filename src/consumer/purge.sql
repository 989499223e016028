-- Forgets dedup rows older than the retention window, a bounded chunk at a time (short locks, no long transaction).
DELETE FROM :schema.processed_events
 WHERE ctid = ANY (ARRAY(
   SELECT ctid FROM :schema.processed_events
    WHERE processed_at < now() - make_interval(secs => $1::double precision / 1000)
    LIMIT $2))
