-- Keeps a record the consumer gave up on; a repeat of the same record (redelivered after a crash) changes nothing.
INSERT INTO :schema.dead_letters
  (consumer, topic, partition, "offset", event_id, key, headers, payload, code, reason, attempts, first_failed_at,
   key_bytes)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (consumer, topic, partition, "offset") DO NOTHING
RETURNING id::text AS id
