-- Claims due effects for one lease: moves their next attempt to the lease's end (another sender takes them again only
-- if this one never records an outcome) and counts the attempt. SKIP LOCKED: concurrent senders claim different rows.
-- `in_doubt` comes back true when an earlier call may have reached the provider: it timed out, or its sender died
-- holding the lease (lease_id still set).
WITH due AS (
  SELECT id, (lease_id IS NOT NULL OR in_doubt) AS in_doubt
    FROM :schema.effects
   WHERE status = 'pending'
     AND next_attempt_at <= now()
     AND ($2::text[] IS NULL OR kind = ANY($2))
   ORDER BY next_attempt_at
   LIMIT $1
     FOR UPDATE SKIP LOCKED
)
UPDATE :schema.effects AS e
   SET attempts = e.attempts + 1,
       lease_id = $3::uuid,
       in_doubt = due.in_doubt,
       next_attempt_at = clock_timestamp() + $4::double precision * interval '1 millisecond',
       updated_at = now()
  FROM due
 WHERE e.id = due.id
RETURNING e.id::text AS id, e.key, e.kind, e.payload, e.attempts, due.in_doubt, e.created_at, e.trace_context
