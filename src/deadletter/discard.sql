-- Marks dead letters discarded (only from `dead`) and releases the keys they held (key-ordered consumers then apply
-- what was parked behind them). Returns how many were discarded.
WITH discarded AS (
  UPDATE :schema.dead_letters SET status = 'discarded'
   WHERE id = ANY($1::bigint[]) AND status = 'dead'
  RETURNING consumer, event_id
), released AS (
  UPDATE :schema.key_holds h SET status = 'released'
    FROM discarded d
   WHERE h.consumer = d.consumer AND h.holder_event_id = d.event_id AND h.status = 'held'
)
SELECT count(*)::int AS discarded FROM discarded
