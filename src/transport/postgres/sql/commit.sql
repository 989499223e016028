-- Commits a group's offset only while this member still holds the partition's lease, and extends the lease in the same
-- statement: a batch that outlived its lease still commits when no other member took the partition meanwhile. The row
-- lock taken here makes another member's take-over wait for this transaction, then find the lease renewed. No row
-- returned: another member holds the partition (or it was given back), and the commit is refused.
WITH lease AS (
  UPDATE :schema.log_leases
     SET expires_at = greatest(expires_at, clock_timestamp() + make_interval(secs => $6::double precision / 1000))
   WHERE group_id = $1 AND topic = $2 AND partition = $3 AND member_id = $5
  RETURNING partition
)
INSERT INTO :schema.log_offsets (group_id, topic, partition, next_offset)
SELECT $1, $2, $3, $4 FROM lease
ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset
