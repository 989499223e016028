-- Before giving up on a parked record that failed in the drain: locks its key's hold, as a drain step does, so that
-- another member's drainer applying the same record meanwhile is over (or waits) before the next statement looks.
SELECT 1 FROM :schema.key_holds WHERE consumer = $1 AND topic = $2 AND key = $3 FOR UPDATE
