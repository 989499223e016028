-- Rows still waiting in the owned shards, oldest first. No watermark: a late committer is read on a later pass.
SELECT seq, topic, key, headers, payload
  FROM :schema.outbox
 WHERE shard = ANY($1::int[])
 ORDER BY seq
 LIMIT $2
