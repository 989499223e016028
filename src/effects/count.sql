-- How many effects have a status (the dead ones for an alert), optionally of one kind.
SELECT count(*)::int AS n FROM :schema.effects WHERE status = $1 AND ($2::text IS NULL OR kind = $2)
