-- 001_core: the outbox and the consumers' dedup table (inbox).

-- Events waiting for the relay, written in the caller's transaction. `seq` orders rows; it is never used as a
-- watermark (a transaction holding seq 301 may commit after 302 is visible): the relay reads what is still here.
CREATE TABLE :schema.outbox (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id         uuid        NOT NULL,
  topic      text        NOT NULL,
  key        text        NOT NULL,
  shard      integer     NOT NULL,
  headers    jsonb       NOT NULL,
  payload    bytea,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_shard_seq ON :schema.outbox (shard, seq);

-- One row per (consumer, event) applied; inserted in the same transaction as the event's effect.
CREATE TABLE :schema.processed_events (
  consumer     text        NOT NULL,
  event_id     uuid        NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX processed_events_processed_at ON :schema.processed_events (processed_at);
