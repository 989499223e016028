-- Lag of every group on the embedded log (the `postgres` transport), per partition: records written and not yet
-- committed by the group, and how long the oldest of them has waited (null when none waits).
SELECT o.group_id, o.topic, o.partition,
       greatest(p.next_offset - o.next_offset, 0)::int AS lag,
       extract(epoch FROM now() - r.ts)::float8 AS lag_seconds
  FROM :schema.log_offsets o
  JOIN :schema.log_partitions p ON p.topic = o.topic AND p.partition = o.partition
  LEFT JOIN :schema.log_records r ON r.topic = o.topic AND r.partition = o.partition AND r."offset" = o.next_offset
 ORDER BY o.group_id, o.topic, o.partition
