-- The CloudEvents time header (`ce_time`, kept base64 like every header) of the given dead letters, for the redrive
-- retention guard; parsed by the caller, as a header may hold anything.
SELECT id::text AS id, headers->>'ce_time' AS time
  FROM :schema.dead_letters
 WHERE id = ANY($1::bigint[])
