-- 013_log_offsets_follow_topics: a group's committed offsets and leases on the embedded log belong to a partition that
-- exists, and go with it. Deleting a topic used to delete its offsets by what the delete's snapshot saw: a group's
-- first offset commit of a partition (an insert) not yet committed then stayed, and once the topic was created again
-- the group started at that offset and skipped the new topic's first records. With the foreign keys the commit's
-- insert locks the partition's row, the delete waits for it and removes what it wrote; a commit or a lease after the
-- delete finds no partition (no lease, or 23503) and is refused.
-- Offsets and leases whose partition is already gone (left by that race) are meaningless, and harmful once a topic of
-- that name comes back: removed first.
DELETE FROM :schema.log_offsets o
 WHERE NOT EXISTS (SELECT 1 FROM :schema.log_partitions p WHERE p.topic = o.topic AND p.partition = o.partition);
DELETE FROM :schema.log_leases l
 WHERE NOT EXISTS (SELECT 1 FROM :schema.log_partitions p WHERE p.topic = l.topic AND p.partition = l.partition);

ALTER TABLE :schema.log_offsets
  ADD FOREIGN KEY (topic, partition) REFERENCES :schema.log_partitions (topic, partition) ON DELETE CASCADE;
ALTER TABLE :schema.log_leases
  ADD FOREIGN KEY (topic, partition) REFERENCES :schema.log_partitions (topic, partition) ON DELETE CASCADE;
-- The cascades look rows up by partition (the primary keys begin with the group).
CREATE INDEX log_offsets_partition ON :schema.log_offsets (topic, partition);
CREATE INDEX log_leases_partition ON :schema.log_leases (topic, partition);
