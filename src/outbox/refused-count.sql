-- Rows set aside now, and a mark of each (its seq and when it was refused): a row refused again after a retry, or one
-- refused while another was discarded, shows as new even when the count stays the same.
SELECT count(*)::int AS n, coalesce(array_agg(seq::text || '@' || refused_at::text), '{}') AS marks
  FROM :schema.outbox_refused
