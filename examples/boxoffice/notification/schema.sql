-- The notification service's tables: who to write to about an order, kept from its OrderConfirmed (an OrderCancelled
-- does not carry the customer), and an OrderCancelled that came before its OrderConfirmed, kept until that one is
-- applied. The e-mails themselves are effects: one per (order, kind) in the library's ledger.
CREATE TABLE IF NOT EXISTS :schema.notification_recipients (
  order_id uuid PRIMARY KEY,
  name     text NOT NULL,
  email    text NOT NULL
);
CREATE TABLE IF NOT EXISTS :schema.notification_cancels_waiting (
  order_id uuid PRIMARY KEY,
  event_id text NOT NULL
);
