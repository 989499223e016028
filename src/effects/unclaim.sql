-- Hands back a claimed effect whose call was not made (the breaker opened, the limiter is empty, the sender closes).
UPDATE :schema.effects
   SET attempts = attempts - 1, lease_id = NULL, next_attempt_at = now(), updated_at = now()
 WHERE id = $1::uuid AND lease_id = $2::uuid AND status = 'pending'
