// The orders of the retry-storm scenario: published at a steady pace straight to the topic, and the e-mail each one
// asks for. The audit reads the provider's own list of real sends.
import type { EmailSend } from '../../examples/email-provider/server.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { sleep } from '../../src/observability/sleep.ts';
import type { Producer } from '../../src/transport/port.ts';

export interface OrderPlaced {
  orderId: string;
  email: string;
}

export const orderId = (n: number) => `order-${String(n).padStart(6, '0')}`;

/** The confirmation e-mail of an order; its subject names the order, so the audit can count sends per order. */
export function confirmation(order: OrderPlaced) {
  return { to: order.email, subject: `Order ${order.orderId} confirmed`, text: 'Thank you for your order.' };
}

/** Publishes `count` OrderPlaced events, `perSecond` of them per second (in tenths of a second), keyed by order. */
export async function publishOrders(
  producer: Producer,
  input: { topic: string; count: number; perSecond: number; signal: AbortSignal },
): Promise<void> {
  const chunk = Math.max(1, Math.round(input.perSecond / 10));
  const started = Date.now();
  for (let first = 0, tick = 0; first < input.count && !input.signal.aborted; first += chunk, tick++) {
    const records = [];
    for (let n = first; n < Math.min(input.count, first + chunk); n++) {
      const data: OrderPlaced = { orderId: orderId(n), email: `guest-${n}@example.com` };
      records.push(
        encodeEvent(createEvent({ topic: input.topic, type: 'OrderPlaced', source: '/shop', key: data.orderId, data })),
      );
    }
    await producer.send(records);
    await sleep(Math.max(0, started + ((tick + 1) * chunk * 1000) / input.perSecond - Date.now()), input.signal);
  }
}

/** Real sends per order, from the provider's own list: beyond one per order is a duplicate; none is a missing one. */
export function auditSends(sent: readonly EmailSend[], orders: number): { duplicates: number; missing: number } {
  const perOrder = new Map<string, number>();
  for (const send of sent) {
    const order = /Order (\S+) confirmed/.exec(send.subject)?.[1] ?? send.subject;
    perOrder.set(order, (perOrder.get(order) ?? 0) + 1);
  }
  let duplicates = 0;
  for (const count of perOrder.values()) duplicates += count - 1;
  let missing = 0;
  for (let n = 0; n < orders; n++) if (!perOrder.has(orderId(n))) missing += 1;
  return { duplicates, missing };
}
