-- Parks a record behind its key's hold; a repeat of the same record (redelivered) is parked once. `key` is the hold's
-- lookup form (a digest for a long key), `key_bytes` the record's own key.
INSERT INTO :schema.parked_records (consumer, topic, key, partition, "offset", event_id, headers, payload, key_bytes)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (consumer, topic, partition, "offset") DO NOTHING
