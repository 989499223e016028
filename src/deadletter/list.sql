-- Dead letters by status, optionally one consumer / topic / code / ids / first-failure time range, oldest first.
SELECT id::text AS id, consumer, topic, partition, "offset"::text AS "offset", event_id::text AS event_id, key, key_bytes, headers,
       payload, code, reason, attempts, first_failed_at, last_failed_at, status
  FROM :schema.dead_letters
 WHERE status = $1
   AND ($2::text IS NULL OR consumer = $2)
   AND ($3::text IS NULL OR topic = $3)
   AND ($4::text IS NULL OR code = $4)
   AND ($5::bigint[] IS NULL OR id = ANY($5))
   AND ($7::timestamptz IS NULL OR first_failed_at >= $7)
   AND ($8::timestamptz IS NULL OR first_failed_at < $8)
 ORDER BY dead_letters.id
 LIMIT $6
