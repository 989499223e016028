-- One redrive chunk: those of the given letters still in the status the redrive takes ($2: dead, or redriven for a
-- second redrive), locked until the chunk's transaction ends, so a discard (or another redrive) decided meanwhile is
-- seen, and one running now waits for the chunk's mark.
SELECT id::text AS id, consumer, topic, partition, "offset"::text AS "offset", event_id::text AS event_id, key, key_bytes, headers,
       payload, code, reason, attempts, first_failed_at, last_failed_at, status
  FROM :schema.dead_letters
 WHERE id = ANY($1::bigint[]) AND status = $2
 ORDER BY id
   FOR UPDATE
