-- The boxoffice story's tables (chaos run and demo): orders (the source of truth) and one "e-mail scheduled" row per applied event.
-- emails has no unique constraint on purpose: a duplicate effect must be visible to the audit, not hidden by the schema.
CREATE TABLE :schema.orders (
  id       uuid PRIMARY KEY,
  order_no integer NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE :schema.emails (
  id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  order_id uuid NOT NULL,
  event_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX emails_order_id ON :schema.emails (order_id);
