-- Of the given dead letters, those that first failed longer ago than their consumer group keeps dedup rows.
SELECT d.id::text AS id, g.dedup_keep_ms::text AS keep_ms
  FROM :schema.dead_letters d
  JOIN :schema.consumer_groups g ON g.name = d.consumer
 WHERE d.id = ANY($1::bigint[])
   AND g.dedup_keep_ms IS NOT NULL
   AND d.first_failed_at < now() - make_interval(secs => g.dedup_keep_ms::double precision / 1000)
