-- Keeps this member alive, forgets expired members, renews this member's leases; returns the live members in order.
WITH beat AS (
  INSERT INTO :schema.log_members (group_id, member_id, topics, expires_at)
  VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))
  ON CONFLICT (group_id, member_id) DO UPDATE SET expires_at = EXCLUDED.expires_at, topics = EXCLUDED.topics
), gone AS (
  DELETE FROM :schema.log_members WHERE group_id = $1 AND expires_at < now() AND member_id <> $2
), renew AS (
  UPDATE :schema.log_leases SET expires_at = now() + make_interval(secs => $4::double precision / 1000)
   WHERE group_id = $1 AND member_id = $2
)
SELECT member_id FROM :schema.log_members
 WHERE group_id = $1 AND (member_id = $2 OR expires_at >= now())
 ORDER BY member_id
