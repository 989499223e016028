-- Commits a group's offset, only while this member holds an unexpired lease on the partition (a member that lost it
-- cannot move the group's position).
INSERT INTO :schema.log_offsets (group_id, topic, partition, next_offset)
SELECT $1, $2, $3, $4
 WHERE EXISTS (SELECT 1 FROM :schema.log_leases
                WHERE group_id = $1 AND topic = $2 AND partition = $3 AND member_id = $5 AND expires_at > now())
ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset
