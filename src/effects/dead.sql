-- Given up: a permanent failure, or `maxAttempts` spent. Kept (with why) for an alert, a look and maybe a revive.
-- Doubt only grows: a last call that may have done the work (a 502, a cut connection) leaves the effect in doubt.
UPDATE :schema.effects
   SET status = 'dead', lease_id = NULL, in_doubt = in_doubt OR $5, last_code = $3, last_error = $4, updated_at = now()
 WHERE id = $1::uuid AND lease_id = $2::uuid AND status = 'pending'
