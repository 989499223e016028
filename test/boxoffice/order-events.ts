// What the pay-side boxoffice tests share: a fresh schema with the embedded log on the real PostgreSQL, the deps a
// service starts with, one order's two events, and a producer that publishes them to boxoffice.orders.
import type { TestContext } from 'node:test';
import type { BoxofficeDeps } from '../../examples/boxoffice/shared/deps.ts';
import {
  type OrderCancelled,
  OrderCancelledType,
  type OrderConfirmed,
  OrderConfirmedType,
  type OrderEvent,
  ordersTopic,
} from '../../examples/boxoffice/shared/events.ts';
import { prefixedTransport } from '../../scenarios/boxoffice/prefixed-transport.ts';
import {
  createEvent,
  type Db,
  type EffectProvider,
  type Event,
  encodeEvent,
  kafkaTransport,
  ProviderError,
  postgresTransport,
  silentLogger,
  type Transport,
  uuidv7,
} from '../../src/index.ts';
import { freshSchema } from '../support/fixtures.ts';

/** One order of Ana's: its OrderConfirmed (version 1) and OrderCancelled (version 2). */
export function anOrder(customer = { name: 'Ana', email: 'ana@example.test' }) {
  const orderId = uuidv7();
  const order = { topic: ordersTopic, source: '/boxoffice/order', key: orderId };
  const base = { orderId, showId: 'show-1', seats: 2, amountCents: 9000 };
  const confirmed = createEvent<OrderConfirmed>({
    ...order,
    type: OrderConfirmedType,
    version: 1,
    data: { ...base, customer, version: 1 },
  });
  const cancelled = createEvent<OrderCancelled>({
    ...order,
    type: OrderCancelledType,
    version: 2,
    data: { ...base, reason: 'customer', version: 2 },
  });
  return { orderId, confirmed, cancelled };
}

/** The embedded log in the test's schema, or the real broker with topics of the test's own (a prefix). */
export type On = 'embedded' | 'kafka';

async function transportFor(t: TestContext, on: On, db: Db, schema: string): Promise<Transport> {
  if (on === 'embedded') return postgresTransport({ db, schema, pollIntervalMs: 20, logger: silentLogger });
  const transport = prefixedTransport(kafkaTransport({ clientId: schema, logger: silentLogger }), `${schema}.`);
  const admin = transport.admin();
  await admin.createTopics([{ topic: ordersTopic, partitions: 2 }]);
  t.after(async () => {
    await admin.deleteTopics([ordersTopic]).catch(() => undefined);
    await admin.close();
  });
  return transport;
}

export async function boxofficeEnv(t: TestContext, on: On = 'embedded') {
  const { db, schema } = await freshSchema(t);
  const transport = await transportFor(t, on, db, schema);
  const deps: BoxofficeDeps = { db, transport, schema, logger: silentLogger, groupPrefix: `${schema}-` };
  const producer = transport.producer();
  t.after(() => producer.close());
  /** Publishes the events in this order (the same event twice: a duplicate delivery). */
  const publish = (...events: Event<OrderEvent>[]) => producer.send(events.map((event) => encodeEvent(event)));
  return { db, schema, deps, publish };
}

/** The naive provider port of the twins: POSTs the payload to `url()` without an idempotency key (and has no lookup). */
export function naivePort(url: () => string): { send: EffectProvider } {
  return {
    send: async (effect, { signal }) => {
      const response = await fetch(url(), { method: 'POST', body: JSON.stringify(effect.payload), signal });
      if (!response.ok) throw new ProviderError('transient', `status ${response.status}`);
    },
  };
}
