// The notification service's handler, in the consumer's transaction: one e-mail per (order, kind), scheduled as an
// effect keyed by the order id. A redelivered event schedules nothing new (the consumer's dedup row, and the effect's
// unique (key, kind)); the sender performs it later with the effect id as the idempotency key.
import { type Effects, type Event, isUuid, PermanentError, type Queryable } from 'effectively';
import {
  type Customer,
  type OrderCancelled,
  OrderCancelledType,
  type OrderConfirmed,
  OrderConfirmedType,
} from '../shared/events.ts';

export const confirmationKind = 'email:confirmation';
export const cancellationKind = 'email:cancellation';

/** The e-mail provider's body: `{ to, subject, text }`. */
function email(customer: Customer, subject: string, text: string) {
  return { to: customer.email, subject, text: `Hello ${customer.name},\n\n${text}\n` };
}

/** A record the service cannot act on is permanent: the consumer keeps it as a dead letter and goes on. */
function checkOrder<T extends OrderConfirmed | OrderCancelled>(data: unknown, withCustomer: boolean): T {
  const { orderId, customer } = (data ?? {}) as { orderId?: unknown; customer?: Partial<Customer> };
  const validCustomer = typeof customer?.name === 'string' && /^[^@\s]+@[^@\s]+$/.test(String(customer?.email));
  if (typeof orderId !== 'string' || !isUuid(orderId) || (withCustomer && !validCustomer))
    throw new PermanentError(
      `not an order event: needs orderId (UUID)${withCustomer ? ' and customer {name, email}' : ''}`,
    );
  return data as T;
}

export function notificationHandler(schema: string, effects: Effects) {
  return async (event: Event, { tx }: { tx: Queryable }): Promise<void> => {
    const mail = { tx, schema, effects };
    if (event.type === OrderConfirmedType) await confirmed(mail, checkOrder(event.data, true));
    else if (event.type === OrderCancelledType) await cancelled(mail, event.id, checkOrder(event.data, false));
  };
}

interface Mail {
  tx: Queryable;
  schema: string;
  effects: Effects;
}

async function confirmed(mail: Mail, { orderId, customer, seats }: OrderConfirmed) {
  const { tx, schema, effects } = mail;
  await tx.query(
    `INSERT INTO ${schema}.notification_recipients (order_id, name, email) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [orderId, customer.name, customer.email],
  );
  const payload = email(customer, 'Your tickets', `Order ${orderId} is confirmed: ${seats} seat(s).`);
  await effects.schedule(tx, { key: orderId, kind: confirmationKind, payload });
  // A cancel that came first waited for this confirmation: its e-mail is scheduled now, after it.
  const waiting = await tx.query(`DELETE FROM ${schema}.notification_cancels_waiting WHERE order_id = $1`, [orderId]);
  if (waiting.rowCount) await cancellation(mail, orderId, customer);
}

async function cancelled(mail: Mail, eventId: string, { orderId }: OrderCancelled) {
  const { rows } = await mail.tx.query<{ name: string; email: string }>(
    `SELECT name, email FROM ${mail.schema}.notification_recipients WHERE order_id = $1`,
    [orderId],
  );
  if (rows[0]) return cancellation(mail, orderId, rows[0]);
  // Its OrderConfirmed has not been applied: no cancellation before the confirmation; it waits (kept, not lost).
  await mail.tx.query(
    `INSERT INTO ${mail.schema}.notification_cancels_waiting (order_id, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    [orderId, eventId],
  );
}

function cancellation({ tx, effects }: Mail, orderId: string, customer: Customer) {
  const payload = email(customer, 'Your order is cancelled', `Order ${orderId} is cancelled; you will be refunded.`);
  return effects.schedule(tx, { key: orderId, kind: cancellationKind, payload });
}
