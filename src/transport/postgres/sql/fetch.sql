-- Up to $4 records of one partition from offset $3 on (ordered by the bigint column, not its text alias).
SELECT r."offset"::text AS "offset", r.key, r.headers, r.value, (extract(epoch FROM r.ts) * 1000)::float8 AS ts
  FROM :schema.log_records r
 WHERE r.topic = $1 AND r.partition = $2 AND r."offset" >= $3
 ORDER BY r."offset"
 LIMIT $4
