-- The ids of dead letters a redrive takes (same filter as list.sql), a page after id $9: ids only, so a large redrive
-- never holds every payload in memory; the rows are read chunk by chunk by lock-dead.sql.
SELECT id::text AS id
  FROM :schema.dead_letters
 WHERE status = $1
   AND ($2::text IS NULL OR consumer = $2)
   AND ($3::text IS NULL OR topic = $3)
   AND ($4::text IS NULL OR code = $4)
   AND ($5::bigint[] IS NULL OR id = ANY($5))
   AND ($7::timestamptz IS NULL OR first_failed_at >= $7)
   AND ($8::timestamptz IS NULL OR first_failed_at < $8)
   AND id > $9::bigint
 ORDER BY dead_letters.id
 LIMIT $6
