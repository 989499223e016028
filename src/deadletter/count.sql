-- Dead letters still waiting for a decision, and every letter ever kept (rows are never deleted): the second only
-- grows, so new letters show even while a redrive or a discard takes others away (id order is not commit order, so
-- no watermark on ids).
SELECT count(*) FILTER (WHERE status = 'dead')::int AS dead, count(*)::text AS total FROM :schema.dead_letters
