-- Forgets rows the broker acknowledged (run only after the acknowledgement); returns those it found.
DELETE FROM :schema.outbox WHERE seq = ANY($1::bigint[]) RETURNING seq
