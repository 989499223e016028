-- Leases of the embedded log (the `postgres` transport) that ran out more than $1 ms ago and that nobody took over: the
-- member died without leaving and no live member of its group took the partition, so nobody reads it.
SELECT group_id, topic, partition, member_id,
       floor(extract(epoch FROM now() - expires_at) * 1000)::text AS expired_ms
  FROM :schema.log_leases
 WHERE expires_at < now() - make_interval(secs => $1::double precision / 1000)
 ORDER BY expires_at, group_id, topic, partition
