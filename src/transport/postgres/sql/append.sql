-- Appends records at the offsets reserved for them, in the order given (a key that is not text kept as bytes).
INSERT INTO :schema.log_records (topic, partition, "offset", key, headers, value, key_bytes)
SELECT $1, $2, $3::bigint + n - 1, k, h, v, kb
  FROM unnest($4::text[], $5::jsonb[], $6::bytea[], $7::bytea[]) WITH ORDINALITY AS r(k, h, v, kb, n)
