-- Up to $4 records of one partition from offset $3 on (ordered by the bigint column, not its text alias), and none when
-- the lease is no longer this member's ($5 group, $6 member): a partition another member took is never read here.
SELECT r."offset"::text AS "offset", coalesce(r.key_bytes, convert_to(r.key, 'UTF8')) AS key, r.headers, r.value, (extract(epoch FROM r.ts) * 1000)::float8 AS ts
  FROM :schema.log_records r
 WHERE r.topic = $1 AND r.partition = $2 AND r."offset" >= $3
   AND EXISTS (SELECT 1 FROM :schema.log_leases l
                WHERE l.group_id = $5 AND l.topic = $1 AND l.partition = $2 AND l.member_id = $6)
 ORDER BY r."offset"
 LIMIT $4
