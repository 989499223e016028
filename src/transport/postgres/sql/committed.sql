-- A group's committed offsets for a topic; -1 where nothing was committed.
SELECT p.partition, coalesce(o.next_offset, -1)::text AS "offset"
  FROM :schema.log_partitions p
  LEFT JOIN :schema.log_offsets o ON o.group_id = $1 AND o.topic = p.topic AND o.partition = p.partition
 WHERE p.topic = $2
 ORDER BY p.partition
