-- The topics a group committed offsets on in the embedded log (the `postgres` transport).
SELECT DISTINCT topic FROM :schema.log_offsets WHERE group_id = $1 ORDER BY topic
