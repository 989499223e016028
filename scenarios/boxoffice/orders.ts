import type { Queryable } from '../../src/db/port.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { uuidv7 } from '../../src/envelope/uuidv7.ts';

export interface OrderConfirmed {
  orderId: string;
  orderNo: number;
  email: string;
}

/** Makes orders `from..to` (inclusive) and their OrderConfirmed events, the ids born once here. */
export function newOrders(
  topic: string,
  from: number,
  to: number,
): { orderNo: number; event: Event<OrderConfirmed> }[] {
  const orders = [];
  for (let orderNo = from; orderNo <= to; orderNo++) {
    const orderId = uuidv7();
    orders.push({
      orderNo,
      event: createEvent<OrderConfirmed>({
        topic,
        type: 'boxoffice.order.confirmed',
        source: '/boxoffice/orders',
        key: orderId,
        version: 1,
        data: { orderId, orderNo, email: `buyer${orderNo}@example.test` },
      }),
    });
  }
  return orders;
}

/** Saves the orders (the source of truth) in the caller's transaction. */
export async function saveOrders(
  tx: Queryable,
  schema: string,
  orders: { orderNo: number; event: Event<OrderConfirmed> }[],
) {
  await tx.query(`INSERT INTO ${schema}.orders (id, order_no) SELECT unnest($1::uuid[]), unnest($2::int[])`, [
    orders.map((order) => order.event.data.orderId),
    orders.map((order) => order.orderNo),
  ]);
}

/** Where an interrupted writer resumes. */
export async function lastOrderNo(db: Queryable, schema: string): Promise<number> {
  const { rows } = await db.query<{ last: number }>(`SELECT coalesce(max(order_no), 0) AS last FROM ${schema}.orders`);
  return Number(rows[0]?.last ?? 0);
}

/** The notification service's effect: one e-mail row (scheduled) per order confirmed. */
export function scheduleEmail(tx: Queryable, schema: string, event: Event) {
  return tx.query(`INSERT INTO ${schema}.emails (order_id, event_id) VALUES ($1, $2)`, [
    (event.data as OrderConfirmed).orderId,
    event.id,
  ]);
}
