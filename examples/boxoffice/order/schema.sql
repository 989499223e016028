-- The order service's tables. An order and its event commit together (the event through the outbox); `version`
-- counts the order's events (1 confirmed, 2 cancelled). A request's Idempotency-Key row commits with the order it made.
CREATE TABLE IF NOT EXISTS :schema.orders (
  id             uuid PRIMARY KEY,
  show_id        text NOT NULL,
  seats          integer NOT NULL CHECK (seats > 0),
  customer_name  text NOT NULL,
  customer_email text NOT NULL,
  amount_cents   bigint NOT NULL CHECK (amount_cents >= 0),
  status         text NOT NULL CHECK (status IN ('confirmed', 'cancelled')),
  version        integer NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS :schema.idempotency_keys (
  key          text PRIMARY KEY,
  request_hash text NOT NULL,
  order_id     uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
