-- Deletes up to $2 done or cancelled effects last changed more than $1 ms ago (the caller loops until none is left).
DELETE FROM :schema.effects
 WHERE id IN (SELECT id
                FROM :schema.effects
               WHERE status IN ('done', 'cancelled')
                 AND updated_at < now() - $1::bigint * interval '1 millisecond'
               LIMIT $2)
