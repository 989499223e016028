-- 011_long_keys: record keys of any length where a table indexes them. A btree entry holds at most ~2.7 KB, so a
-- longer key failed the insert that records a failure (54000) and the consumer or relay retried it for ever.
-- Key-ordered holds and parks now store a digest for a long key (consumer/key-order/key-order.ts, `holdKey`), and a
-- parked record keeps its key's bytes to be applied with; refused outbox rows are looked up by a hash index.
ALTER TABLE :schema.parked_records ADD COLUMN key_bytes bytea;
DROP INDEX :schema.outbox_refused_key;
CREATE INDEX outbox_refused_key ON :schema.outbox_refused USING hash (key);
