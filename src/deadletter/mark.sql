-- Moves dead letters to `redriven` or `discarded` (only from `dead`: a second redrive of the same row does nothing).
UPDATE :schema.dead_letters SET status = $2 WHERE id = ANY($1::bigint[]) AND status = 'dead'
