-- Retention: forgets records older than the window, a bounded chunk at a time.
DELETE FROM :schema.log_records
 WHERE ctid = ANY (ARRAY(
   SELECT ctid FROM :schema.log_records
    WHERE ts < now() - make_interval(secs => $1::double precision / 1000)
    LIMIT $2))
