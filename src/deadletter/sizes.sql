-- Payload bytes of the given dead letters, in the order redrive sends them, to cut its steps by bytes as well as count.
SELECT id::text AS id, coalesce(octet_length(payload), 0) AS size
  FROM :schema.dead_letters
 WHERE id = ANY($1::bigint[])
