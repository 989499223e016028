-- The latest actions, newest first; $2 narrows them to one action (`redrive`), null for all.
SELECT id::text AS id, at, actor, role, action, target, outcome, details
  FROM :schema.console_audit
 WHERE ($2::text IS NULL OR action = $2)
 ORDER BY id DESC
 LIMIT $1
