-- These records of one partition were applied or given up on: their starts are forgotten ($4: a bigint[] of offsets).
DELETE FROM :schema.started_records
 WHERE consumer = $1 AND topic = $2 AND partition = $3 AND "offset" = ANY ($4::bigint[])
