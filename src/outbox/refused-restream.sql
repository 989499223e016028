-- Writes the rows held behind the released keys ($1, those with no row left in outbox_refused) again, with the same
-- seq and content, in seq order: a relay that reads the write-ahead log went past them while they were held, and sees
-- them now as new inserts, after the row put back. The poller sees the same rows as before. The rows put back by this
-- same release ($2) stay as they are: written once already, a second write would stream them twice.
WITH released AS (
  SELECT DISTINCT k.key FROM unnest($1::text[]) AS k(key)
   WHERE NOT EXISTS (SELECT 1 FROM :schema.outbox_refused AS r WHERE r.key = k.key)
), moved AS (
  DELETE FROM :schema.outbox AS o USING released
   WHERE o.key = released.key AND o.seq <> ALL($2::bigint[]) RETURNING o.*
)
INSERT INTO :schema.outbox (seq, id, topic, key, shard, headers, payload, created_at)
OVERRIDING SYSTEM VALUE
SELECT seq, id, topic, key, shard, headers, payload, created_at FROM moved ORDER BY seq
