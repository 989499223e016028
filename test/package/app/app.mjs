// A user's plain JavaScript app against the installed package: embedded (PGlite), no TypeScript loader, no Kafka
// client installed. Orders go through the outbox, the relay and a consumer; each applied once.
import {
  createConsumer,
  createEvent,
  createOutbox,
  createRelay,
  kafkaTransport,
  migrate,
  pgliteDb,
  postgresTransport,
} from 'effectively';

const orders = Number(process.argv[2] ?? 20);
const db = await pgliteDb();
await migrate(db);
await db.query('CREATE TABLE orders (id text PRIMARY KEY, total int NOT NULL)');
await db.query('CREATE TABLE emails (order_id text PRIMARY KEY)');
const transport = postgresTransport({ db });
const outbox = createOutbox();

for (let n = 1; n <= orders; n++) {
  const orderId = `order-${n}`;
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [orderId, n * 10]);
    await outbox.enqueue(
      tx,
      createEvent({
        topic: 'order-events',
        type: 'boxoffice.order.confirmed',
        source: '/boxoffice/orders',
        key: orderId,
        version: 1,
        data: { orderId, total: n * 10 },
      }),
    );
  });
}

const relay = createRelay({ db, producerFactory: () => transport.producer() });
await relay.start();
const outcomes = { applied: 0, duplicate: 0, stale: 0, parked: 0 };
let done;
const allApplied = new Promise((resolve) => {
  done = resolve;
});
const consumer = createConsumer({
  db,
  transport,
  group: 'notifications',
  topics: ['order-events'],
  handler: async (event, { tx }) => {
    await tx.query('INSERT INTO emails (order_id) VALUES ($1)', [event.data.orderId]);
  },
  onOutcome: (_event, outcome) => {
    outcomes[outcome] += 1;
    if (outcomes.applied === orders) done();
  },
});
await consumer.start();
await allApplied;
await consumer.close();
await relay.close();
const { rows } = await db.query('SELECT count(*)::int AS emails FROM emails');
await db.close();

let kafka;
try {
  kafkaTransport();
  kafka = 'loaded';
} catch (error) {
  kafka = `${error.code}${error.details?.missing ? ' (missing)' : ''}`;
}
console.log(
  `app: orders=${orders} applied=${outcomes.applied} duplicates=${outcomes.duplicate} emails=${rows[0].emails} kafka=${kafka}`,
);
