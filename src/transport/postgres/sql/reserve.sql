-- Reserves $3 offsets of one partition; the row lock is held to the appender's commit, so offsets appear in order. Only
-- while the topic still has $4 partitions: a producer that partitioned its records by a count it remembered from before
-- the topic was deleted and created again (with another count) gets no row and partitions again by the count of now.
-- Once a partition's row is locked here, the topic cannot be deleted before this transaction ends.
UPDATE :schema.log_partitions p
   SET next_offset = p.next_offset + $3
  FROM :schema.log_topics t
 WHERE p.topic = $1 AND p.partition = $2 AND t.topic = $1 AND t.partitions = $4
RETURNING p.next_offset - $3 AS first
