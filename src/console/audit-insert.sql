-- One action taken (or refused) through the console.
INSERT INTO :schema.console_audit (actor, role, action, target, outcome, details)
VALUES ($1, $2, $3, $4, $5, $6::jsonb)
RETURNING id::text AS id
