-- 015_console_audit: what operators did through the console (a redrive, a discard, a refusal), kept for whoever asks
-- later who did what, when, and with which outcome. Rows are only ever inserted.
CREATE TABLE :schema.console_audit (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at      timestamptz NOT NULL DEFAULT now(),
  actor   text        NOT NULL,
  role    text        NOT NULL,
  action  text        NOT NULL,
  -- what it acted on, in words (`redrive job 3: 12 letters`)
  target  text        NOT NULL,
  -- `done`, `refused`, `failed`, `started`, `cancelled`
  outcome text        NOT NULL,
  details jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX console_audit_at ON :schema.console_audit (at);
