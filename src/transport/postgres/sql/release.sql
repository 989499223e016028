-- Gives back this member's leases on the given partitions ($3 topics, $4 partitions, pairwise).
DELETE FROM :schema.log_leases l
 USING unnest($3::text[], $4::int[]) AS r(topic, partition)
 WHERE l.group_id = $1 AND l.member_id = $2 AND l.topic = r.topic AND l.partition = r.partition
