-- Of the dead letters $1, those whose key has a later record in the embedded log that their group read past and did
-- not give up on (not a dead letter, not parked behind a held key): a later event of the key was applied, and
-- redriving the earlier one applies it after it (out of order). Only where the log is in this database.
SELECT d.id::text AS id, d.key, count(*)::int AS later, min(r."offset")::text AS first_offset
  FROM :schema.dead_letters d
  JOIN :schema.log_offsets o ON o.group_id = d.consumer AND o.topic = d.topic AND o.partition = d.partition
  JOIN :schema.log_records r
    ON r.topic = d.topic AND r.partition = d.partition AND r."offset" > d."offset" AND r."offset" < o.next_offset
   AND coalesce(r.key_bytes, convert_to(r.key, 'UTF8')) = coalesce(d.key_bytes, convert_to(d.key, 'UTF8'))
 WHERE d.id = ANY($1::bigint[])
   AND NOT EXISTS (SELECT 1 FROM :schema.dead_letters l
                    WHERE l.consumer = d.consumer AND l.topic = r.topic AND l.partition = r.partition
                      AND l."offset" = r."offset")
   AND NOT EXISTS (SELECT 1 FROM :schema.parked_records p
                    WHERE p.consumer = d.consumer AND p.topic = r.topic AND p.partition = r.partition
                      AND p."offset" = r."offset")
 GROUP BY d.id, d.key
 ORDER BY d.id
