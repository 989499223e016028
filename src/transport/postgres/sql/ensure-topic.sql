-- Creates a topic and its partitions if missing (like a broker's auto-create); returns its partition count.
WITH topic AS (
  INSERT INTO :schema.log_topics (topic, partitions) VALUES ($1, $2)
  ON CONFLICT (topic) DO UPDATE SET partitions = :schema.log_topics.partitions
  RETURNING partitions
), parts AS (
  INSERT INTO :schema.log_partitions (topic, partition)
  SELECT $1, p FROM topic, generate_series(0, topic.partitions - 1) AS p
  ON CONFLICT DO NOTHING
)
SELECT partitions FROM topic
