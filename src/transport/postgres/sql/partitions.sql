-- Every partition of the subscribed topics, in a stable order (the assignment deals them out round-robin).
SELECT topic, partition FROM :schema.log_partitions WHERE topic = ANY($1::text[]) ORDER BY topic, partition
