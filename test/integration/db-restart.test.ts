// PostgreSQL restarted mid-batch, as the consumer sees it (every connection cut inside its transaction, new ones
// refused for two seconds, then accepted again): nothing is lost, nothing applied twice, nothing dead-lettered — the
// record was not at fault. The naive twin (apply, log the error and move on) loses the records of the outage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function setup(t: import('node:test').TestContext) {
  const { db: direct, schema } = await freshSchema(t);
  await direct.query(`CREATE TABLE ${schema}.applied (event_id uuid NOT NULL, n int NOT NULL)`);
  const { transport, topic } = await freshTopic(t, 2);
  const url = new URL(defaultDatabaseUrl());
  const proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db: Db = pgDb({ connectionString: url.toString(), max: 2 });
  t.after(async () => {
    await db.close().catch(() => undefined);
    await proxy.close().catch(() => undefined);
  });
  const events = Array.from({ length: 300 }, (_, n) =>
    createEvent({ topic, type: 'x', source: '/t', key: `k${n % 17}`, data: { n } }),
  );
  const counts = async () =>
    (
      await direct.query<{ total: number; distinct: number }>(
        `SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM ${schema}.applied`,
      )
    ).rows[0]!;
  return { direct, db, schema, transport, topic, proxy, events, counts };
}

test('kafka: PostgreSQL restarted mid-batch: nothing lost, nothing twice, nothing dead-lettered', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { direct, db, schema, transport, topic, proxy, events, counts } = await setup(t);
  let restarts: Promise<void> | undefined;
  const consumer = createConsumer({
    db,
    transport,
    group: randomName('g'),
    topics: [topic],
    schema,
    logger: silentLogger,
    maxBatchSize: 50,
    retry: { baseMs: 100, capMs: 1000 },
    handler: async (event, { tx }) => {
      const { n } = event.data as { n: number };
      // Mid-batch: the server goes away while this transaction is open.
      if (n === 120 && !restarts) restarts = proxy.restart(2000);
      await tx.query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [event.id, n]);
    },
  });
  const producer = transport.producer();
  try {
    await consumer.start();
    await producer.send(events.map(encodeEvent));
    await eventually(async () => (await counts()).distinct === 300, 60_000, 'every event applied');
    await restarts;
    const { total } = await counts();
    assert.equal(total, 300, 'nothing applied twice');
    const dead = await direct.query(`SELECT 1 FROM ${schema}.dead_letters`);
    assert.equal(dead.rowCount, 0, 'an outage is not the record’s fault: nothing dead-lettered');
    assert.ok(restarts, 'the restart happened');
  } finally {
    await consumer.close();
    await producer.close();
  }
});

test('naive twin: apply, log the error and move on loses the records of the outage', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema, transport, topic, proxy, events, counts } = await setup(t);
  let restarts: Promise<void> | undefined;
  const raw = transport.consumer({
    group: randomName('naive'),
    topics: [topic],
    maxBatchSize: 50,
    fromBeginning: true,
  });
  let seen = 0;
  await raw.run(async (batch, control) => {
    for (const record of batch.records) {
      seen += 1;
      if (seen === 120 && !restarts) restarts = proxy.restart(2000);
      const n = JSON.parse(record.value!.toString()).n as number;
      await db
        .query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [record.headers.ce_id!.toString(), n])
        .catch(() => undefined); // "log and continue"
      control.resolve(record.offset);
    }
    await raw.commit([positionAfter(batch.records.at(-1)!)]);
  });
  const producer = transport.producer();
  try {
    await producer.send(events.map(encodeEvent));
    await eventually(async () => seen >= 300, 60_000, 'every record consumed');
    await restarts;
    const { distinct } = await counts();
    assert.ok(distinct < 300, `records lost in the outage (${300 - distinct})`);
  } finally {
    await raw.close();
    await producer.close();
  }
});

test('a refused call of the handler (a third party) with the database up is the record’s failure, not an outage', async (t) => {
  const { pgliteDb } = await import('../../src/db/pglite.ts');
  const { migrate } = await import('../../src/db/migrate.ts');
  const { postgresTransport } = await import('../../src/transport/postgres/transport.ts');
  const { deadLetterStore } = await import('../../src/deadletter/store.ts');
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db, { schema: 'refused' });
  const transport = postgresTransport({ db, schema: 'refused', pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  let calls = 0;
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema: 'refused',
    logger: silentLogger,
    maxAttempts: 2,
    retry: { baseMs: 20, capMs: 50 },
    handler: async () => {
      calls += 1;
      throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' });
    },
  });
  const producer = transport.producer();
  t.after(async () => {
    await consumer.close();
    await producer.close();
  });
  await consumer.start();
  await producer.send([encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: {} }))]);
  const store = deadLetterStore({ schema: 'refused' });
  await eventually(async () => (await store.list(db)).length === 1, 30_000, 'the dead letter after maxAttempts');
  assert.equal(calls, 2, 'counted as attempts');
});
