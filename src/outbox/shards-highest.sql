-- The highest shard a waiting or set-aside row uses (an index scan each): evidence of the writers' shard count.
SELECT GREATEST((SELECT max(shard) FROM :schema.outbox), (SELECT max(shard) FROM :schema.outbox_refused)) AS shard
