-- Reserves $3 offsets of one partition; the row lock is held to the appender's commit, so offsets appear in order.
UPDATE :schema.log_partitions
   SET next_offset = next_offset + $3
 WHERE topic = $1 AND partition = $2
RETURNING next_offset - $3 AS first
