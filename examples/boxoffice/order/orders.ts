// The order service's writes: each order row commits with its event (through the outbox), and a request's
// Idempotency-Key row with the order it made, so a retried request finds its order instead of making another.
import { createEvent, type Db, type Outbox, type Queryable, uuidv7 } from 'effectively';
import {
  type CancelReason,
  type OrderCancelled,
  OrderCancelledType,
  type OrderConfirmed,
  OrderConfirmedType,
  ordersTopic,
} from '../shared/events.ts';
import { BadRequest, type OrderRequest, requestHash } from './request.ts';

export interface Order extends OrderRequest {
  orderId: string;
  status: 'confirmed' | 'cancelled';
  version: number;
}

interface OrderRow extends Record<string, unknown> {
  id: string;
  show_id: string;
  seats: number;
  customer_name: string;
  customer_email: string;
  amount_cents: string;
  status: 'confirmed' | 'cancelled';
  version: number;
}

const source = '/boxoffice/order';

function toOrder(row: OrderRow): Order {
  return {
    orderId: row.id,
    showId: row.show_id,
    seats: row.seats,
    customer: { name: row.customer_name, email: row.customer_email },
    amountCents: Number(row.amount_cents),
    status: row.status,
    version: row.version,
  };
}

export async function findOrder(db: Queryable, schema: string, orderId: string, lock = false): Promise<Order | null> {
  const { rows } = await db.query<OrderRow>(
    `SELECT * FROM ${schema}.orders WHERE id = $1${lock ? ' FOR UPDATE' : ''}`,
    [orderId],
  );
  return rows[0] ? toOrder(rows[0]) : null;
}

/**
 * Claims an Idempotency-Key in the transaction: null when it is new (the caller makes the order), else the order it
 * made before. A concurrent request with the same key waits on the row until the first commits, then finds its order.
 */
async function claimKey(tx: Queryable, schema: string, key: string, hash: string, orderId: string) {
  const claimed = await tx.query(
    `INSERT INTO ${schema}.idempotency_keys (key, request_hash, order_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [key, hash, orderId],
  );
  if (claimed.rowCount === 1) return null;
  const { rows } = await tx.query<{ request_hash: string; order_id: string }>(
    `SELECT request_hash, order_id FROM ${schema}.idempotency_keys WHERE key = $1`,
    [key],
  );
  const earlier = rows[0]!;
  if (earlier.request_hash !== hash)
    throw new BadRequest(422, 'this Idempotency-Key was used with another request body');
  return (await findOrder(tx, schema, earlier.order_id))!;
}

/**
 * Places an order: the order row, its key row and its OrderConfirmed commit together. `created` is false when the key
 * had made this order already. `idempotencyKeys: false` is the naive build (no key row): a retry makes a second order.
 */
export async function placeOrder(
  db: Db,
  schema: string,
  outbox: Outbox,
  request: OrderRequest,
  key: string | undefined,
  idempotencyKeys = true,
): Promise<{ order: Order; created: boolean }> {
  return db.transaction(async (tx) => {
    const orderId = uuidv7();
    if (key !== undefined && idempotencyKeys) {
      const earlier = await claimKey(tx, schema, key, requestHash(request), orderId);
      if (earlier) return { order: earlier, created: false };
    }
    const { showId, seats, customer, amountCents } = request;
    await tx.query(
      `INSERT INTO ${schema}.orders (id, show_id, seats, customer_name, customer_email, amount_cents, status, version)
       VALUES ($1, $2, $3, $4, $5, $6, 'confirmed', 1)`,
      [orderId, showId, seats, customer.name, customer.email, amountCents],
    );
    const data: OrderConfirmed = { orderId, showId, seats, customer, amountCents, version: 1 };
    await outbox.enqueue(
      tx,
      createEvent({ topic: ordersTopic, type: OrderConfirmedType, source, key: orderId, version: 1, data }),
    );
    return { order: { ...request, orderId, status: 'confirmed', version: 1 }, created: true };
  });
}

/**
 * Cancels a confirmed order in `tx` (its row and OrderCancelled together): the one path of a customer's cancel and of
 * a sold-out refusal. An order already cancelled stays as it is and nothing is emitted; null when there is no order.
 */
export async function cancelIn(
  tx: Queryable,
  schema: string,
  outbox: Outbox,
  orderId: string,
  reason: CancelReason,
): Promise<Order | null> {
  const order = await findOrder(tx, schema, orderId, true);
  if (!order || order.status === 'cancelled') return order;
  await tx.query(`UPDATE ${schema}.orders SET status = 'cancelled', version = 2 WHERE id = $1`, [orderId]);
  const { showId, seats, amountCents } = order;
  const data: OrderCancelled = { orderId, showId, seats, amountCents, reason, version: 2 };
  await outbox.enqueue(
    tx,
    createEvent({ topic: ordersTopic, type: OrderCancelledType, source, key: orderId, version: 2, data }),
  );
  return { ...order, status: 'cancelled', version: 2 };
}

/** `POST /orders/:id/cancel`: cancels the order for its customer; cancelling it again changes nothing. */
export async function cancelOrder(db: Db, schema: string, outbox: Outbox, orderId: string): Promise<Order> {
  const order = await db.transaction((tx) => cancelIn(tx, schema, outbox, orderId, 'customer'));
  if (!order) throw new BadRequest(404, `no order ${orderId}`);
  return order;
}
