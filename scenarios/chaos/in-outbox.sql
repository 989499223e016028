-- Which of the given order ids (the events' keys) still wait in the outbox, with their event ids.
SELECT key, id::text AS id FROM :schema.outbox WHERE key = ANY($1::text[])
