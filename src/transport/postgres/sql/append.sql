-- Appends records at the offsets reserved for them, in the order given.
INSERT INTO :schema.log_records (topic, partition, "offset", key, headers, value)
SELECT $1, $2, $3::bigint + n - 1, k, h, v
  FROM unnest($4::text[], $5::jsonb[], $6::bytea[]) WITH ORDINALITY AS r(k, h, v, n)
