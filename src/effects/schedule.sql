-- Schedules an effect in the caller's transaction; the same (key, kind) again keeps the first row and returns its id.
-- $6: the trace context it was scheduled in (NULL without one).
WITH inserted AS (
  INSERT INTO :schema.effects (id, key, kind, payload, next_attempt_at, trace_context)
  VALUES ($1::uuid, $2, $3, $4::jsonb, coalesce($5::timestamptz, now()), $6::jsonb)
  ON CONFLICT (key, kind) DO NOTHING
  RETURNING id
)
SELECT id::text AS id FROM inserted
UNION ALL
SELECT id::text FROM :schema.effects WHERE key = $2 AND kind = $3
LIMIT 1
