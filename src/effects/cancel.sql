-- Cancels effects that were not performed: dead ones, and pending ones no sender holds right now. An effect under a
-- live claim may be reaching the provider this very moment: it is left alone (cancel it again once its outcome is
-- recorded). One whose claim expired (its sender died mid-call) or whose earlier call timed out is cancelled but
-- comes back `in_doubt`: the provider may have done it. Rows are locked first, so a concurrent claim either comes
-- before (and the row is re-checked) or finds it cancelled.
WITH target AS (
  SELECT id, (in_doubt OR lease_id IS NOT NULL) AS in_doubt
    FROM :schema.effects
   WHERE id = ANY($1::uuid[])
     AND (status = 'dead' OR (status = 'pending' AND (lease_id IS NULL OR next_attempt_at <= clock_timestamp())))
     FOR UPDATE
)
UPDATE :schema.effects AS e
   SET status = 'cancelled', lease_id = NULL, updated_at = now()
  FROM target
 WHERE e.id = target.id
RETURNING e.id::text AS id, target.in_doubt
