// A user's plain JavaScript app against the installed package, with no TypeScript loader. Orders go through the
// outbox, the relay and a consumer; each is applied once.
//   node app.mjs embedded N   PGlite and the postgres transport (no Kafka client installed: kafkaTransport() says so)
//   node app.mjs kafka N      the PostgreSQL server at DATABASE_URL and the broker at KAFKA_BROKERS
import { randomBytes } from 'node:crypto';
import {
  createConsumer,
  createEvent,
  createOutbox,
  createRelay,
  kafkaTransport,
  migrate,
  pgDb,
  pgliteDb,
  postgresTransport,
} from 'effectively';

const [mode = 'embedded', count = '20'] = process.argv.slice(2);
const orders = Number(count);
const run = randomBytes(4).toString('hex');
const schema = mode === 'kafka' ? `app_${run}` : 'effectively';
const topic = mode === 'kafka' ? `order-events-${run}` : 'order-events';
const db = mode === 'kafka' ? pgDb() : await pgliteDb();
const transport = mode === 'kafka' ? kafkaTransport() : postgresTransport({ db });
await migrate(db, { schema });
await db.query(`CREATE TABLE ${schema}.orders (id text PRIMARY KEY, total int NOT NULL)`);
await db.query(`CREATE TABLE ${schema}.emails (order_id text PRIMARY KEY)`);
const admin = transport.admin();
await admin.createTopics([{ topic, partitions: 2 }]);
const outbox = createOutbox({ schema });

for (let n = 1; n <= orders; n++) {
  const orderId = `order-${n}`;
  await db.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${schema}.orders (id, total) VALUES ($1, $2)`, [orderId, n * 10]);
    await outbox.enqueue(
      tx,
      createEvent({
        topic,
        type: 'boxoffice.order.confirmed',
        source: '/boxoffice/orders',
        key: orderId,
        version: 1,
        data: { orderId, total: n * 10 },
      }),
    );
  });
}

const relay = createRelay({ db, schema, producerFactory: () => transport.producer() });
await relay.start();
const outcomes = { applied: 0, duplicate: 0, stale: 0, parked: 0 };
let done;
const allApplied = new Promise((resolve) => {
  done = resolve;
});
const consumer = createConsumer({
  db,
  transport,
  schema,
  group: `notifications-${run}`,
  topics: [topic],
  handler: async (event, { tx }) => {
    await tx.query(`INSERT INTO ${schema}.emails (order_id) VALUES ($1)`, [event.data.orderId]);
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
const { rows } = await db.query(`SELECT count(*)::int AS emails FROM ${schema}.emails`);
if (mode === 'kafka') {
  await admin.deleteTopics([topic]);
  await db.query(`DROP SCHEMA ${schema} CASCADE`);
}
await admin.close();
await db.close();

let kafka = 'loaded';
if (mode !== 'kafka') {
  try {
    kafkaTransport();
  } catch (error) {
    kafka = `${error.code}${error.details?.missing ? ' (missing)' : ''}`;
  }
}
console.log(
  `app: mode=${mode} orders=${orders} applied=${outcomes.applied} duplicates=${outcomes.duplicate} emails=${rows[0].emails} kafka=${kafka}`,
);
