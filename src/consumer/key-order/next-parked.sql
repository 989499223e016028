-- The oldest parked record of a released hold, with the hold locked (a concurrent park of the key waits for us).
SELECT p.id::text AS id, p.partition, p."offset"::text AS "offset", p.headers, p.payload, p.key_bytes,
       (extract(epoch FROM p.parked_at) * 1000)::float8 AS ts
  FROM :schema.key_holds h
  LEFT JOIN LATERAL (
    SELECT * FROM :schema.parked_records r
     WHERE r.consumer = h.consumer AND r.topic = h.topic AND r.key = h.key
     ORDER BY r.id LIMIT 1) p ON true
 WHERE h.consumer = $1 AND h.topic = $2 AND h.key = $3 AND h.status = 'released'
   FOR UPDATE OF h
