-- 009_outbox_refused: outbox rows the broker refused for good, set aside so the rest flows; and the settings every
-- writer and relay of one schema must share (the outbox's shard count).

-- A row the transport refused (too large for its topic, invalid or missing topic...), moved out of the outbox with its
-- original `seq`. While a key has a row here, the relay publishes no later row of that key: they wait in the outbox
-- (held) until the refused row is retried (put back with its seq, so it goes first) or discarded.
CREATE TABLE :schema.outbox_refused (
  seq        bigint      PRIMARY KEY,
  id         uuid        NOT NULL,
  topic      text        NOT NULL,
  key        text        NOT NULL,
  shard      integer     NOT NULL,
  headers    jsonb       NOT NULL,
  payload    bytea,
  created_at timestamptz NOT NULL,
  refused_at timestamptz NOT NULL DEFAULT now(),
  -- The transport's error code (Kafka's, e.g. ERR_MSG_SIZE_TOO_LARGE, a SQLSTATE, or an EFF_* code) and its message.
  error_code text        NOT NULL,
  reason     text        NOT NULL
);
CREATE INDEX outbox_refused_key ON :schema.outbox_refused (shard, key);

-- Library-wide settings of this schema, written once (e.g. `outbox.shards`, by the first relay to start).
CREATE TABLE :schema.settings (
  name       text        PRIMARY KEY,
  value      text        NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
