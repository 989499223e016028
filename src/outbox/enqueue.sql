-- Inserts a batch of encoded events in the caller's transaction, in the order given (seq follows array order).
INSERT INTO :schema.outbox (id, topic, key, shard, headers, payload)
SELECT id, topic, key, shard, headers, payload
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::jsonb[], $6::bytea[])
       WITH ORDINALITY AS e(id, topic, key, shard, headers, payload, n)
 ORDER BY n
