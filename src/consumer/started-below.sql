-- Starts of records below where a partition's first batch begins: the group's position is past them (finished).
DELETE FROM :schema.started_records WHERE consumer = $1 AND topic = $2 AND partition = $3 AND "offset" < $4::bigint
