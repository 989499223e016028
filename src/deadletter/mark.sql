-- Moves letters to `redriven` or `discarded` from the status they were locked in ($3): a second redrive of the same row
-- that took it meanwhile finds it moved and does nothing.
UPDATE :schema.dead_letters SET status = $2 WHERE id = ANY($1::bigint[]) AND status = $3
