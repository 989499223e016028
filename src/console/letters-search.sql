-- The ids of the dead letters that match the console's filters, newest first: status, consumer, topic, code, and bytes
-- the payload contains ($5, null for any); at most $6.
SELECT id::text AS id
  FROM :schema.dead_letters
 WHERE status = $1
   AND ($2::text IS NULL OR consumer = $2)
   AND ($3::text IS NULL OR topic = $3)
   AND ($4::text IS NULL OR code = $4)
   AND ($5::bytea IS NULL OR position($5::bytea IN coalesce(payload, ''::bytea)) > 0)
 ORDER BY id DESC
 LIMIT $6
