-- Keeps this member alive, forgets expired members and renews this member's leases, in one statement. Returns the live
-- members in order, the subscribed partitions in a stable order (the assignment deals them out round-robin), and the
-- partitions whose lease this member still holds: a partition it reads that is missing there was taken by another member.
-- A lease is never shortened here (see `renew`).
WITH beat AS (
  INSERT INTO :schema.log_members (group_id, member_id, topics, expires_at)
  VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))
  ON CONFLICT (group_id, member_id) DO UPDATE SET expires_at = EXCLUDED.expires_at, topics = EXCLUDED.topics
), gone AS (
  DELETE FROM :schema.log_members WHERE group_id = $1 AND expires_at < now() AND member_id <> $2
), renew AS (
  -- The later of the two: a commit extends a lease from its own clock (clock_timestamp()), which can be later than this
  -- statement's now() when the commit's transaction took the row while this statement waited for it.
  UPDATE :schema.log_leases
     SET expires_at = greatest(expires_at, now() + make_interval(secs => $4::double precision / 1000))
   WHERE group_id = $1 AND member_id = $2
  RETURNING topic, partition
)
SELECT coalesce((SELECT array_agg(member_id ORDER BY member_id) FROM :schema.log_members
                  WHERE group_id = $1 AND (member_id = $2 OR expires_at >= now())), '{}') AS members,
       coalesce((SELECT json_agg(json_build_object('topic', topic, 'partition', partition) ORDER BY topic, partition)
                   FROM :schema.log_partitions WHERE topic = ANY($3::text[])), '[]') AS partitions,
       coalesce((SELECT json_agg(json_build_object('topic', topic, 'partition', partition)) FROM renew), '[]') AS held
