-- Forgets rows the broker acknowledged (run only after the acknowledgement).
DELETE FROM :schema.outbox WHERE seq = ANY($1::bigint[])
