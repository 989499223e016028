-- Claims a range's event ids for one consumer in one round trip ($2: a uuid[] literal). Returns the ids that were
-- claimed before this statement (duplicates), usually none: the fresh ones are all the others, so a batch of
-- fresh events costs no result rows. An id given twice is claimed once and not returned.
WITH claimed AS (
  SELECT unnest($2::uuid[]) AS event_id
), fresh AS (
  INSERT INTO :schema.processed_events (consumer, event_id)
  SELECT $1, event_id FROM claimed
  ON CONFLICT DO NOTHING
  RETURNING event_id
)
SELECT claimed.event_id::text AS event_id
FROM claimed LEFT JOIN fresh USING (event_id)
WHERE fresh.event_id IS NULL
