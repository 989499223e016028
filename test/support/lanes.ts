// The setup the pool-fit tests share: a world of one topic on PostgreSQL, keyed records to fill the lanes, a Db that
// hides its size, and a rendezvous that counts how many handlers were inside at once.
import type { TestContext } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from './fixtures.ts';

/** A fresh schema and a PostgreSQL transport on `db` with the topic `orders` (one partition); `db` closed after. */
export async function ordersWorld(t: TestContext, db: Db) {
  const { schema } = await freshSchema(t);
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 50, logger: silentLogger });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  return { schema, transport };
}

export type OrdersWorld = Awaited<ReturnType<typeof ordersWorld>>;

/** One `orders` event `{ key, v }` of type `pool.test`. */
export function keyedEvent(key: string, v = 1) {
  return encodeEvent(createEvent({ topic: 'orders', type: 'pool.test', source: '/pool', key, data: { key, v } }));
}

/** Sends one record on each of the keys `k0` … `k{count-1}`: one per lane. */
export async function sendKeys(world: OrdersWorld, count: number): Promise<void> {
  const producer = world.transport.producer();
  await producer.send(Array.from({ length: count }, (_, n) => keyedEvent(`k${n}`)));
  await producer.close();
}

/** The same pool behind a Db that does not tell its size: the consumer cannot check it (as it only warned before). */
export function unsized(db: Db): Db {
  return {
    query: (text, params) => db.query(text, params),
    transaction: (work) => db.transaction(work),
    close: () => Promise.resolve(),
  };
}

/**
 * A handler that waits (in its transaction) until `expected` handlers are inside at once, or `waitMs`: handlers that
 * cannot all be inside at once still end, and `most()` says how many were.
 */
export function rendezvous(expected: number, waitMs: number) {
  let running = 0;
  let most = 0;
  let done = 0;
  let allIn: () => void = () => undefined;
  const everyoneIn = new Promise<void>((resolve) => {
    allIn = resolve;
  });
  const handler = async () => {
    running += 1;
    most = Math.max(most, running);
    if (running === expected) allIn();
    await Promise.race([everyoneIn, new Promise((resolve) => setTimeout(resolve, waitMs))]);
    running -= 1;
    done += 1;
  };
  return { handler, most: () => most, done: () => done };
}

/** What `start()` threw, or undefined when it started. */
export function startError(start: Promise<void>): Promise<unknown> {
  return start.then(
    () => undefined,
    (error: unknown) => error,
  );
}
