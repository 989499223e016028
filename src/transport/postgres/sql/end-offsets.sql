SELECT partition, next_offset::text AS "offset" FROM :schema.log_partitions WHERE topic = $1 ORDER BY partition
