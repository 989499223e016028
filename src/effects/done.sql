-- The provider did it. Any claim may record this (the same key gave the same answer), so not only the lease holder.
UPDATE :schema.effects
   SET status = 'done', lease_id = NULL, in_doubt = false, provider_ref = $2, last_code = NULL, last_error = NULL,
       updated_at = now()
 WHERE id = $1::uuid AND status = 'pending'
