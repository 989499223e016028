-- The call failed and may pass later: due again after the delay. Only the lease holder records it (a later claim owns
-- the effect now). Doubt only grows: a 503 after a timeout does not prove the timed-out call did nothing.
UPDATE :schema.effects
   SET lease_id = NULL, next_attempt_at = clock_timestamp() + $3::double precision * interval '1 millisecond',
       in_doubt = in_doubt OR $4, last_code = $5, last_error = $6, updated_at = now()
 WHERE id = $1::uuid AND lease_id = $2::uuid AND status = 'pending'
