-- Parks a record behind its key's hold; a repeat of the same record (redelivered) is parked once.
INSERT INTO :schema.parked_records (consumer, topic, key, partition, "offset", event_id, headers, payload)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (consumer, topic, partition, "offset") DO NOTHING
