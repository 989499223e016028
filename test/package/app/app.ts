// A user's strict TypeScript app (NodeNext, strict, exactOptionalPropertyTypes), type-checked against the shipped
// declarations only.
import {
  createConsumer,
  createEvent,
  createOutbox,
  createRelay,
  type Db,
  EffectivelyError,
  type Event,
  type EventHandler,
  migrate,
  pgDb,
  pgliteDb,
  postgresTransport,
  type Transport,
} from 'effectively';

interface OrderConfirmed {
  orderId: string;
  total: number;
}

const embedded = process.env.DATABASE_URL === undefined;
const db: Db = embedded ? await pgliteDb() : pgDb();
await migrate(db, { schema: 'effectively' });
const transport: Transport = postgresTransport({ db });

const event: Event<OrderConfirmed> = createEvent({
  topic: 'order-events',
  type: 'boxoffice.order.confirmed',
  source: '/boxoffice/orders',
  key: 'order-1',
  version: 1,
  data: { orderId: 'order-1', total: 10 },
});
await db.transaction((tx) => createOutbox().enqueue(tx, event));

const handler: EventHandler = async (received, { tx }) => {
  const { orderId } = received.data as OrderConfirmed;
  await tx.query('INSERT INTO emails (order_id) VALUES ($1)', [orderId]);
};
// a handler that resolves with its query's result counts as applied: it type-checks as written
const returning: EventHandler = (_received, { tx }) => tx.query('SELECT 1');
void returning;
const consumer = createConsumer({ db, transport, group: 'notifications', topics: ['order-events'], handler });
const relay = createRelay({ db, producerFactory: () => transport.producer() });
try {
  await relay.start();
  await consumer.start();
  const health: [boolean, boolean, number, number] = [
    consumer.isRunning(),
    relay.isRunning(),
    consumer.stats().partitions.length,
    relay.stats().failingPasses,
  ];
  void health;
} catch (error) {
  if (error instanceof EffectivelyError) console.error(error.code, error.retryable);
  throw error;
} finally {
  await consumer.close();
  await relay.close();
}
