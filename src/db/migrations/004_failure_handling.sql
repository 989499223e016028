-- 004_failure_handling: what redrive and key-ordered retries need to know.

-- Per consumer group: how long its dedup rows are kept (null: forever). Redrive refuses, unless forced, dead letters
-- older than that window: a replay the dedup table no longer covers could apply an event twice.
CREATE TABLE :schema.consumer_groups (
  name          text        PRIMARY KEY,
  dedup_keep_ms bigint,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Key-ordered retries: while the holder (a record of `key` in retry or dead) is unresolved, later records of that key
-- are parked instead of overtaking it. `released`: the holder was applied or discarded; the parked records are applied
-- in order, then the hold goes.
CREATE TABLE :schema.key_holds (
  consumer        text        NOT NULL,
  topic           text        NOT NULL,
  key             text        NOT NULL,
  holder_event_id uuid        NOT NULL,
  status          text        NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'released')),
  held_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, topic, key)
);
CREATE INDEX key_holds_released ON :schema.key_holds (consumer, status);

CREATE TABLE :schema.parked_records (
  id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  consumer  text        NOT NULL,
  topic     text        NOT NULL,
  key       text        NOT NULL,
  partition integer     NOT NULL,
  "offset"  bigint      NOT NULL,
  event_id  uuid,
  headers   jsonb       NOT NULL DEFAULT '{}',
  payload   bytea,
  parked_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (consumer, topic, partition, "offset")
);
CREATE INDEX parked_records_key ON :schema.parked_records (consumer, topic, key, id);
