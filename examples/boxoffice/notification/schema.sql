-- The notification service's table: who to write to about an order, kept from its OrderConfirmed (an OrderCancelled
-- does not carry the customer). The e-mails themselves are effects: one per (order, kind) in the library's ledger.
CREATE TABLE IF NOT EXISTS :schema.notification_recipients (
  order_id uuid PRIMARY KEY,
  name     text NOT NULL,
  email    text NOT NULL
);
