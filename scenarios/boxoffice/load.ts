// The scenarios' load generator: customers ordering through the order API like real clients, with the faults a client
// brings. Every request carries an Idempotency-Key and is retried (same key) on a 503 or a dropped connection (the
// order service restarting); some answers are "lost", so the client sends the same request again; some orders are
// cancelled; and one poison order (a record no service can read) lands on the orders topic.
import type { Show } from '../../examples/boxoffice/inventory/index.ts';
import { OrderConfirmedType, ordersTopic } from '../../examples/boxoffice/shared/events.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { uuidv7 } from '../../src/envelope/uuidv7.ts';
import type { Transport } from '../../src/transport/port.ts';

export interface LoadOptions {
  url: () => string;
  orders: number;
  shows: Show[];
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Orders whose first answer is lost: the client sends the same request again (default 3). */
  lostAnswers?: number;
  /** Every k-th order is cancelled once placed (default 10; 0: none). */
  cancelEvery?: number;
  /** Called after each order placed, with how many are. */
  onPlaced?: (placed: number) => void | Promise<void>;
}

export interface LoadResult {
  placed: number;
  cancelled: number;
  /** Requests sent again: lost answers and retries after a 503 or a dropped connection. */
  resent: number;
}

const customerOf = (n: number) =>
  n === 1
    ? { name: 'Ana', email: 'ana@example.test' }
    : n === 2
      ? { name: 'Bruno', email: 'bruno@example.test' }
      : { name: `Buyer ${n}`, email: `buyer${n}@example.test` };

export async function generateLoad(options: LoadOptions): Promise<LoadResult> {
  const result: LoadResult = { placed: 0, cancelled: 0, resent: 0 };
  const lost = new Set(spread(options.lostAnswers ?? 3, options.orders));
  const cancelEvery = options.cancelEvery ?? 10;

  async function call(path: string, body: unknown, key?: string): Promise<{ orderId: string }> {
    for (let attempt = 1; ; attempt++) {
      const answer = await fetch(`${options.url()}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
        body: JSON.stringify(body),
      }).catch(() => undefined); // the service is restarting: its connection dropped
      if (answer && answer.status < 300) return (await answer.json()) as { orderId: string };
      if (answer && answer.status !== 503) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
      if (attempt > 200) throw new Error(`${path}: no answer after ${attempt} attempts`);
      result.resent++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function place(n: number): Promise<void> {
    const show = options.shows[n % options.shows.length]!;
    const body = { showId: show.showId, seats: 1 + ((n * 7) % 4), customer: customerOf(n), amountCents: 4500 * n };
    const key = `order-${n}`;
    if (lost.has(n)) {
      await call('/orders', body, key); // its answer never reached the client...
      result.resent++;
    }
    const { orderId } = await call('/orders', body, key); // ...which sends the same request again
    result.placed++;
    await options.onPlaced?.(result.placed);
    if (cancelEvery > 0 && n % cancelEvery === 0) {
      await call(`/orders/${orderId}/cancel`, {});
      result.cancelled++;
    }
  }

  let next = 1;
  const client = async () => {
    while (next <= options.orders) await place(next++);
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, client));
  return result;
}

/** `count` numbers spread over 1..total. */
function spread(count: number, total: number): number[] {
  return Array.from({ length: Math.min(count, total) }, (_, i) => 1 + Math.floor(((i + 0.5) * total) / count));
}

/** One record on the orders topic that no service can apply: it must become a dead letter, not a crash or a skip. */
export async function sendPoisonOrder(transport: Transport): Promise<string> {
  const producer = transport.producer();
  await producer.connect();
  try {
    const key = uuidv7();
    const data = { orderId: 'not-an-order', showId: 42, seats: 'all of them' };
    const event = createEvent({ topic: ordersTopic, type: OrderConfirmedType, source: '/poison', key, data });
    await producer.send([encodeEvent(event)]);
    return key;
  } finally {
    await producer.close();
  }
}
