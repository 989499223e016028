-- Of the given dead letters, those that first failed longer ago than the shortest dedup retention of any consumer group
-- (a redrive goes back to the topic, where every group reading it sees it again, not only the one that gave up).
WITH shortest AS (
  SELECT min(dedup_keep_ms) AS keep_ms FROM :schema.consumer_groups WHERE dedup_keep_ms IS NOT NULL
)
SELECT d.id::text AS id, s.keep_ms::text AS keep_ms
  FROM :schema.dead_letters d, shortest s
 WHERE d.id = ANY($1::bigint[])
   AND s.keep_ms IS NOT NULL
   AND d.first_failed_at < now() - make_interval(secs => s.keep_ms::double precision / 1000)
