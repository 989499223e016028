-- Whether a parked record is still parked (in a statement of its own after the hold's lock, so in a snapshot that sees
-- what another member's drainer committed while this one waited for it).
SELECT EXISTS (SELECT 1 FROM :schema.parked_records WHERE id = $1) AS parked
