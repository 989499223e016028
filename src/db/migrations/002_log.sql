-- 002_log: the `postgres` transport, a partitioned log in tables (the embedded default on PGlite).

CREATE TABLE :schema.log_topics (
  topic      text PRIMARY KEY,
  partitions integer NOT NULL CHECK (partitions > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One row per partition holds the next offset. Appenders take it with UPDATE (a row lock held to their commit), so
-- offsets become visible in order: a reader can never see offset n+1 while n is still uncommitted.
CREATE TABLE :schema.log_partitions (
  topic       text    NOT NULL REFERENCES :schema.log_topics (topic) ON DELETE CASCADE,
  partition   integer NOT NULL,
  next_offset bigint  NOT NULL DEFAULT 0,
  PRIMARY KEY (topic, partition)
);

CREATE TABLE :schema.log_records (
  topic     text        NOT NULL,
  partition integer     NOT NULL,
  "offset"  bigint      NOT NULL,
  key       text,
  headers   jsonb       NOT NULL DEFAULT '{}',
  value     bytea,
  ts        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (topic, partition, "offset"),
  FOREIGN KEY (topic, partition) REFERENCES :schema.log_partitions (topic, partition) ON DELETE CASCADE
);
CREATE INDEX log_records_ts ON :schema.log_records (ts);

-- Committed offsets of consumer groups (the next offset to read).
CREATE TABLE :schema.log_offsets (
  group_id    text    NOT NULL,
  topic       text    NOT NULL,
  partition   integer NOT NULL,
  next_offset bigint  NOT NULL,
  PRIMARY KEY (group_id, topic, partition)
);

-- Live members of a group; a member that stops heart-beating expires and its partitions move on.
CREATE TABLE :schema.log_members (
  group_id   text        NOT NULL,
  member_id  text        NOT NULL,
  topics     text[]      NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, member_id)
);

-- Who reads a partition for a group; only the holder of an unexpired lease may commit its offsets.
CREATE TABLE :schema.log_leases (
  group_id   text        NOT NULL,
  topic      text        NOT NULL,
  partition  integer     NOT NULL,
  member_id  text        NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (group_id, topic, partition)
);
