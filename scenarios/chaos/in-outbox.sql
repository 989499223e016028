-- Which of the given order ids (the events' keys) still wait in the outbox.
SELECT DISTINCT key FROM :schema.outbox WHERE key = ANY($1::text[])
