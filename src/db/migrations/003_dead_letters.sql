-- 003_dead_letters: records a consumer could not apply, kept whole so they can be redriven once the cause is fixed.
CREATE TABLE :schema.dead_letters (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  consumer        text        NOT NULL,
  topic           text        NOT NULL,
  partition       integer     NOT NULL,
  "offset"        bigint      NOT NULL,
  event_id        uuid,
  key             text,
  headers         jsonb       NOT NULL DEFAULT '{}',
  payload         bytea,
  code            text        NOT NULL,
  reason          text        NOT NULL,
  attempts        integer     NOT NULL,
  first_failed_at timestamptz NOT NULL,
  last_failed_at  timestamptz NOT NULL DEFAULT now(),
  status          text        NOT NULL DEFAULT 'dead' CHECK (status IN ('dead', 'redriven', 'discarded')),
  -- the same record dead-lettered again (a crash before its offset commit) stays one row
  UNIQUE (consumer, topic, partition, "offset")
);
CREATE INDEX dead_letters_status ON :schema.dead_letters (status, consumer, topic);
