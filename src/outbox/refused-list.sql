-- Rows set aside, oldest first, each with how many later rows of its key wait (held) in the outbox behind it.
SELECT r.seq, r.id::text AS id, r.topic, r.key, r.error_code, r.reason, r.refused_at, length(r.payload) AS size,
       (SELECT count(*) FROM :schema.outbox AS o WHERE o.shard = r.shard AND o.key = r.key) AS held
  FROM :schema.outbox_refused AS r
 ORDER BY r.seq
