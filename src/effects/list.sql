-- Effects by id, or by status / kind / key, oldest first.
SELECT id::text AS id, key, kind, payload, status, attempts, next_attempt_at, in_doubt, last_code, last_error,
       provider_ref, created_at, updated_at
  FROM :schema.effects
 WHERE ($1::uuid[] IS NULL OR id = ANY($1))
   AND ($2::text IS NULL OR status = $2)
   AND ($3::text IS NULL OR kind = $3)
   AND ($4::text IS NULL OR key = $4)
 ORDER BY created_at, id
 LIMIT $5
