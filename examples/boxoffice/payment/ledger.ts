// The payment service's handler, in the consumer's transaction: a ledger entry per event (keyed by the event id, the
// balance is the sum), the provider call scheduled as an effect (performed later by the sender, its id the
// idempotency key), and the order's version, so a cancel is never applied before its confirm.
import {
  type Effects,
  type Event,
  isUuid,
  ledgerEntry,
  PermanentError,
  type Queryable,
  versionGuard,
} from 'effectively';
import { type OrderCancelled, OrderCancelledType, type OrderConfirmed, OrderConfirmedType } from '../shared/events.ts';

/** The effect kinds this service schedules; its sender performs them on the payment provider. */
export const chargeKind = 'payment:charge';
export const refundKind = 'payment:refund';

/** A record the service cannot act on is permanent: the consumer keeps it as a dead letter and goes on. */
function checkOrder<T extends OrderConfirmed | OrderCancelled>(data: unknown): T {
  const { orderId, amountCents, version } = (data ?? {}) as Record<string, unknown>;
  const atLeast = (n: unknown, min: number) => Number.isSafeInteger(n) && Number(n) >= min;
  if (typeof orderId !== 'string' || !isUuid(orderId) || !atLeast(amountCents, 0) || !atLeast(version, 1))
    throw new PermanentError(
      'not an order event: needs orderId (UUID), amountCents (0 or more) and version (1 or more)',
    );
  return data as T;
}

interface Ledger {
  schema: string;
  effects: Effects;
  /** Default true. False is the naive twin of the tests: a cancel before its confirm is applied at once. */
  waitForConfirm: boolean;
}

export function paymentHandler(ledger: Ledger) {
  return async (event: Event, { tx }: { tx: Queryable }): Promise<'applied' | 'stale'> => {
    const paid = event.type === OrderConfirmedType || event.type === OrderCancelledType;
    if (!paid) return 'stale'; // another kind of order event: nothing to pay
    const order = checkOrder<OrderConfirmed | OrderCancelled>(event.data);
    // A free ticket (the order API takes 0 cents): nothing to charge, so nothing to refund either.
    if (order.amountCents === 0) return 'applied';
    if (event.type === OrderConfirmedType) return confirm(tx, ledger, event.id, order as OrderConfirmed);
    return cancel(tx, ledger, event.id, order as OrderCancelled);
  };
}

async function confirm(tx: Queryable, ledger: Ledger, eventId: string, order: OrderConfirmed) {
  const { schema, effects } = ledger;
  const { orderId, amountCents, customer } = order;
  // Scheduling is idempotent per (order, kind): a second confirm of this order gets the first charge's id back.
  const chargeKey = await effects.schedule(tx, {
    key: orderId,
    kind: chargeKind,
    payload: { orderId, amountCents, customer },
  });
  const known = await tx.query(
    `INSERT INTO ${schema}.payment_orders (order_id, version, amount_cents, charge_key) VALUES ($1, 1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [orderId, amountCents, chargeKey],
  );
  if (known.rowCount === 0) return 'stale'; // this order was confirmed before (under another event id)
  const entry = {
    event_id: eventId,
    order_id: orderId,
    entry: 'charge',
    amount_cents: amountCents,
    effect_id: chargeKey,
  };
  await ledgerEntry(tx, { table: `${schema}.payment_ledger`, entry });
  // A cancel that came first waited for this confirm: it is applied now, after it, in the same transaction.
  const waiting = await tx.query<{ event_id: string; data: OrderCancelled }>(
    `DELETE FROM ${schema}.payment_cancels_waiting WHERE order_id = $1 RETURNING event_id, data`,
    [orderId],
  );
  if (waiting.rows[0]) await cancel(tx, ledger, waiting.rows[0].event_id, waiting.rows[0].data);
  return 'applied';
}

async function cancel(tx: Queryable, ledger: Ledger, eventId: string, order: OrderCancelled) {
  const { schema, effects } = ledger;
  const { orderId, amountCents } = order;
  const charged = await tx.query<{ charge_key: string }>(
    `SELECT charge_key FROM ${schema}.payment_orders WHERE order_id = $1`,
    [orderId],
  );
  const chargeKey = charged.rows[0]?.charge_key;
  if (chargeKey === undefined) {
    if (ledger.waitForConfirm) {
      // Its OrderConfirmed has not been applied: never refund first; the cancel waits for it (kept, not lost).
      await tx.query(
        `INSERT INTO ${schema}.payment_cancels_waiting (order_id, event_id, data) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING`,
        [orderId, eventId, JSON.stringify(order)],
      );
      return 'applied';
    }
  } else {
    const guard = { table: `${schema}.payment_orders`, id: { column: 'order_id', value: orderId }, set: {} };
    if ((await versionGuard(tx, { ...guard, version: order.version })) === 'stale') return 'stale'; // cancelled before
  }
  const payload = { orderId, chargeKey, amountCents };
  const refundKey = await effects.schedule(tx, { key: orderId, kind: refundKind, payload });
  const entry = {
    event_id: eventId,
    order_id: orderId,
    entry: 'refund',
    amount_cents: -amountCents,
    effect_id: refundKey,
  };
  await ledgerEntry(tx, { table: `${schema}.payment_ledger`, entry });
  return 'applied';
}

/** The balance: the sum of the ledger (of one order, or of all). */
export async function balance(db: Queryable, schema: string, orderId?: string): Promise<number> {
  const { rows } = await db.query<{ cents: string }>(
    `SELECT coalesce(sum(amount_cents), 0) AS cents FROM ${schema}.payment_ledger WHERE $1::uuid IS NULL OR order_id = $1`,
    [orderId ?? null],
  );
  return Number(rows[0]?.cents ?? 0);
}
