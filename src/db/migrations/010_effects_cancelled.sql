-- 010_effects_cancelled: an operator may cancel an effect that was not performed. A cancelled effect is never claimed
-- again and stays for the record (its (key, kind) stays taken: scheduling it again does nothing). Done and cancelled
-- effects can be purged by age.
ALTER TABLE :schema.effects DROP CONSTRAINT effects_status_check;
ALTER TABLE :schema.effects
  ADD CONSTRAINT effects_status_check CHECK (status IN ('pending', 'done', 'dead', 'cancelled'));
CREATE INDEX effects_finished ON :schema.effects (updated_at) WHERE status IN ('done', 'cancelled');
