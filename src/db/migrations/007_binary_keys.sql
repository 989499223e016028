-- 007_binary_keys: a record key that is not lossless UTF-8 text (or holds a NUL) is kept as bytes, so a redrive sends
-- the record with the very key it came with (and so to the same partition). `key` stays the readable form, or null.
ALTER TABLE :schema.dead_letters ADD COLUMN key_bytes bytea;
