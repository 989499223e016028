// The seeds' story through Kysely: orders written with Kysely, their event and e-mail in the same Kysely transaction,
// a payment service whose handler writes through Kysely in the consumer's transaction. One order fails after its
// enqueue (rolled back: no event, no e-mail); every event is delivered twice (applied once).
//   DATABASE_URL=postgres://… node --import tsx examples/orm/main.ts
import {
  createConsumer,
  createEffects,
  createEvent,
  createOutbox,
  createRelay,
  encodeEvent,
  migrate,
  pgDb,
  postgresTransport,
  silentLogger,
} from 'effectively';
import { fromKysely, kyselyIn } from 'effectively/kysely';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

interface Tables {
  orders: { id: string; total: number };
  payments: { order_id: string; amount: number };
}

const schema = `orm_example_${process.pid}`;
const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
url.searchParams.set('options', `-c search_path=${schema}`); // the business tables live beside the library's
const db = pgDb({ connectionString: url.href });
await migrate(db, { schema });
await db.query(
  'CREATE TABLE orders (id text PRIMARY KEY, total int); CREATE TABLE payments (order_id text, amount int)',
);
const kysely = new Kysely<Tables>({
  dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.href }) }),
});
const outbox = createOutbox({ schema });
const effects = createEffects({ schema });
const transport = postgresTransport({ db, schema, pollIntervalMs: 20 });
await transport.admin().createTopics([{ topic: 'orders', partitions: 2 }]);

const committed: ReturnType<typeof createEvent>[] = [];
for (let n = 1; n <= 5; n++) {
  const id = `order-${n}`;
  await kysely
    .transaction()
    .execute(async (trx) => {
      await trx
        .insertInto('orders')
        .values({ id, total: n * 10 })
        .execute();
      const event = createEvent({
        topic: 'orders',
        type: 'order.placed',
        source: '/shop',
        key: id,
        data: { id, total: n * 10 },
      });
      await outbox.enqueue(fromKysely(trx), event);
      await effects.schedule(fromKysely(trx), { key: id, kind: 'email:confirmation', payload: { id } });
      if (n === 3) throw new Error('the card was declined after the enqueue');
      committed.push(event);
    })
    .catch((error: Error) => console.log(`${id}: rolled back (${error.message})`));
}

const relay = createRelay({ db, schema, producerFactory: () => transport.producer(), logger: silentLogger });
let outcomes = 0;
const consumer = createConsumer<{ id: string; total: number }>({
  db,
  transport,
  group: 'payments',
  topics: ['orders'],
  schema,
  logger: silentLogger,
  retention: false,
  handler: async (event, ctx) => {
    await kyselyIn<Tables>(ctx.tx)
      .insertInto('payments')
      .values({ order_id: event.data.id, amount: event.data.total })
      .execute();
  },
  onOutcome: () => {
    outcomes += 1;
  },
});
await relay.start();
await consumer.start();
while (outcomes < 4) await new Promise((resolve) => setTimeout(resolve, 50));
const count = async (sql: string) =>
  Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`)).rows[0]!.n);
const published = await count(`${schema}.log_records`);
// a redelivery: the four events again, with their ids (a relay that crashed after sending, say)
const producer = transport.producer();
await producer.send(committed.map((event) => encodeEvent(event)));
while (outcomes < 8) await new Promise((resolve) => setTimeout(resolve, 50));
await Promise.all([relay.close(), consumer.close(), producer.close()]);

console.log(
  `kysely: orders=${await count('orders')} events=${published} ` +
    `emails=${await count(`${schema}.effects`)} deliveries=${outcomes} payments=${await count('payments')} ` +
    `duplicates=${await count('(SELECT order_id FROM payments GROUP BY order_id HAVING count(*) > 1) d')}`,
);
await kysely.destroy();
await db.query(`DROP SCHEMA ${schema} CASCADE`);
await db.close();
