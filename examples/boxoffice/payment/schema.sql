-- The payment service's tables. `payment_ledger` records each fact once, keyed by the event that told it (a charge
-- positive, a refund negative; `seq` their order): the balance is their sum, never a total changed in place. `payment_orders` holds each
-- order's version (1 confirmed, 2 cancelled) and the charge's effect id (the idempotency key a refund names).
-- `payment_cancels_waiting` keeps an OrderCancelled that came before its OrderConfirmed until that one is applied.
CREATE TABLE IF NOT EXISTS :schema.payment_ledger (
  event_id     text PRIMARY KEY,
  seq          bigint GENERATED ALWAYS AS IDENTITY,
  order_id     uuid NOT NULL,
  entry        text NOT NULL CHECK (entry IN ('charge', 'refund')),
  amount_cents bigint NOT NULL,
  effect_id    text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS :schema.payment_orders (
  order_id     uuid PRIMARY KEY,
  version      integer NOT NULL,
  amount_cents bigint NOT NULL,
  charge_key   text NOT NULL
);
CREATE TABLE IF NOT EXISTS :schema.payment_cancels_waiting (
  order_id uuid PRIMARY KEY,
  event_id text NOT NULL,
  data     jsonb NOT NULL
);
