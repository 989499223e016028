WITH offsets AS (DELETE FROM :schema.log_offsets WHERE topic = ANY($1::text[])),
     leases AS (DELETE FROM :schema.log_leases WHERE topic = ANY($1::text[]))
DELETE FROM :schema.log_topics WHERE topic = ANY($1::text[])
