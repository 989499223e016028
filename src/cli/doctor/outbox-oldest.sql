-- The doctor's view of the outbox: how many rows wait for the relay and how long the oldest has waited (ms).
SELECT count(*)::text AS n,
       coalesce(floor(extract(epoch FROM now() - min(created_at)) * 1000), 0)::text AS oldest_ms
  FROM :schema.outbox
