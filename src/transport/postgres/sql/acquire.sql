-- Takes a partition's lease if it is free, expired, or already ours; returns a row when taken, with where to start.
WITH lease AS (
  INSERT INTO :schema.log_leases (group_id, topic, partition, member_id, expires_at)
  VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::double precision / 1000))
  ON CONFLICT (group_id, topic, partition) DO UPDATE
    SET member_id = EXCLUDED.member_id, expires_at = EXCLUDED.expires_at
    WHERE :schema.log_leases.expires_at < now() OR :schema.log_leases.member_id = EXCLUDED.member_id
  RETURNING partition
)
SELECT (SELECT next_offset::text FROM :schema.log_offsets WHERE group_id = $1 AND topic = $2 AND partition = $3)
         AS committed,
       (SELECT next_offset::text FROM :schema.log_partitions WHERE topic = $2 AND partition = $3) AS end_offset
  FROM lease
