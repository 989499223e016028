-- Deletes topics; their partitions, records, and the groups' offsets and leases go with them (foreign keys, 013). The
-- cascade waits for a commit in flight on a partition (its offset insert locks the partition's row) and removes it too.
DELETE FROM :schema.log_topics WHERE topic = ANY($1::text[])
