-- The keys of the given set-aside rows.
SELECT DISTINCT key FROM :schema.outbox_refused WHERE seq = ANY($1::bigint[])
