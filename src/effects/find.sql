-- The id of the effect for (key, kind): read again when a concurrent transaction inserted it after this statement's snapshot.
SELECT id::text AS id FROM :schema.effects WHERE key = $1 AND kind = $2
