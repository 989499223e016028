-- The records a consumer gave up on in one partition from an offset on, dead or discarded, with their dedup keys: a
-- partition's first batch after an assignment passes over the ones that come again (their offset commit was lost in a
-- crash or a rebalance). Served by the (consumer, topic, partition, "offset")
-- unique index. Records without a dedup key (no valid id) are left out: nothing could tell them apart from another
-- record at the same coordinates (a topic deleted and created again), and they fail the same way when they come again.
-- Redriven letters are left out: their copy went out with the same event id, so if the record itself comes again it is
-- applied or absorbed by the dedup row, and a record replayed at the same coordinates (a topic created again, a
-- restore) is not hidden behind a letter nobody looks at any more.
-- At most $5 rows (a group read again from the start may have many): the caller continues past the last one.
SELECT "offset"::text AS "offset", event_id::text AS event_id
FROM :schema.dead_letters
WHERE consumer = $1 AND topic = $2 AND partition = $3 AND "offset" >= $4 AND event_id IS NOT NULL
  AND status <> 'redriven'
ORDER BY dead_letters."offset" -- the bigint, not the text it is selected as
LIMIT $5
