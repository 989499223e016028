-- Of the given dead letters ($1 ids, $2 their events' own time in ms since the epoch, NULL when unknown), those older
-- than the shortest dedup retention of any consumer group (a redrive goes back to the topic, where every group reading
-- it sees it again, not only the one that gave up). Their age is the older of the event's own time and the first
-- failure: other groups applied it soon after it was written, and their dedup rows age from then, not from when a
-- lagging group gave up on it. Measured on the database's clock.
WITH shortest AS (
  SELECT min(dedup_keep_ms) AS keep_ms FROM :schema.consumer_groups WHERE dedup_keep_ms IS NOT NULL
)
SELECT d.id::text AS id, s.keep_ms::text AS keep_ms
  FROM unnest($1::bigint[], $2::float8[]) AS g(id, event_ms)
  JOIN :schema.dead_letters d ON d.id = g.id
 CROSS JOIN shortest s
 WHERE s.keep_ms IS NOT NULL
   AND least(d.first_failed_at, to_timestamp(g.event_ms / 1000)) < now() - make_interval(secs => s.keep_ms::double precision / 1000)
