-- 008_log_binary_keys: the embedded log keeps a record key that is not lossless UTF-8 text (or holds a NUL) as bytes,
-- as the dead letters already do (007): such a key reached PostgreSQL's text column and failed the whole append (22021).
-- `key` stays the text form, or null when the key is kept in `key_bytes`.
ALTER TABLE :schema.log_records ADD COLUMN key_bytes bytea;
