-- Gives dead effects another round (same id, so the same idempotency key): due now, attempts from zero.
UPDATE :schema.effects
   SET status = 'pending', attempts = 0, next_attempt_at = now(), lease_id = NULL, updated_at = now()
 WHERE id = ANY($1::uuid[]) AND status = 'dead'
