-- Dead letters by status, optionally one consumer / topic / code, oldest first.
SELECT id::text AS id, consumer, topic, partition, "offset"::text AS "offset", event_id::text AS event_id, key, headers,
       payload, code, reason, attempts, first_failed_at, last_failed_at, status
  FROM :schema.dead_letters
 WHERE status = $1
   AND ($2::text IS NULL OR consumer = $2)
   AND ($3::text IS NULL OR topic = $3)
   AND ($4::text IS NULL OR code = $4)
   AND ($5::bigint[] IS NULL OR id = ANY($5))
 ORDER BY id
 LIMIT $6
