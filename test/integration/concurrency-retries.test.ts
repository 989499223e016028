// Keys in parallel with the failure paths (issue 13, item 3): in-place retries and dead letters, and key-ordered
// retries through retry topics, on the `postgres` transport on the server (lanes really run at once there).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function setup(t: Parameters<typeof freshSchema>[0], records: { n: number; key: string }[]) {
  const { db, schema } = await freshSchema(t);
  await db.query(`CREATE TABLE ${schema}.applied (seq serial PRIMARY KEY, n int NOT NULL, key text)`);
  const transport = postgresTransport({ db, schema, heartbeatMs: 200, pollIntervalMs: 20, logger: silentLogger });
  const topic = randomName('kr').replace('_', '-');
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  await transport
    .producer()
    .send(
      records.map(({ n, key }) =>
        encodeEvent(createEvent({ topic, type: 'kr.test', source: '/kr', key, data: { n } })),
      ),
    );
  const applied = async () =>
    (await db.query<{ n: number; key: string }>(`SELECT n, key FROM ${schema}.applied ORDER BY seq`)).rows;
  return { db, schema, transport, topic, applied };
}

test('key mode, in-place retries: a poison key is dead-lettered after its attempts; every other record applied once', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const records = Array.from({ length: 24 }, (_, n) => ({ n, key: n === 5 ? 'poison' : `k${n % 4}` }));
  const w = await setup(t, records);
  const attemptsOf5: number[] = [];
  const consumer = createConsumer({
    db: w.db,
    transport: w.transport,
    group: randomName('g'),
    topics: [w.topic],
    schema: w.schema,
    logger: silentLogger,
    concurrency: { mode: 'key', max: 4 },
    maxAttempts: 3,
    retry: { baseMs: 20, capMs: 50 },
    handler: async (event, { tx }) => {
      const n = (event.data as { n: number }).n;
      if (n === 5) {
        attemptsOf5.push(n);
        throw new Error('poison');
      }
      await tx.query(`INSERT INTO ${w.schema}.applied (n, key) VALUES ($1, $2)`, [n, event.key]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const letters = deadLetterStore({ schema: w.schema });
  await eventually(async () => (await letters.list(w.db)).length >= 1, 30_000, 'the poison record dead-lettered');
  await eventually(async () => (await w.applied()).length >= 23, 30_000, 'the other 23 applied');
  await consumer.close();
  const rows = await w.applied();
  assert.equal(rows.length, 23, 'each other record applied once (redelivered ones were duplicates)');
  assert.deepEqual(
    rows.map((row) => row.n).sort((a, b) => a - b),
    records.map((r) => r.n).filter((n) => n !== 5),
  );
  assert.equal(attemptsOf5.length, 3, 'three attempts, then a dead letter');
  assert.equal((await letters.list(w.db)).length, 1);
});

test('key mode with key-ordered retries: a failing record holds its key, later records of it wait, others flow', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  // Key P: 2, 6, 10 (2 fails once); keys a, b: the rest.
  const records = Array.from({ length: 12 }, (_, n) => ({ n, key: n % 4 === 2 ? 'P' : n % 2 ? 'a' : 'b' }));
  const w = await setup(t, records);
  let failedOnce = false;
  const consumer = createConsumer({
    db: w.db,
    transport: w.transport,
    group: randomName('g'),
    topics: [w.topic],
    schema: w.schema,
    logger: silentLogger,
    concurrency: { mode: 'key', max: 4 },
    keyOrdered: true,
    drainIntervalMs: 100,
    retryTopics: { delaysMs: [200] },
    handler: async (event, { tx }) => {
      const n = (event.data as { n: number }).n;
      if (n === 2 && !failedOnce) {
        failedOnce = true;
        throw new Error('fails once');
      }
      await tx.query(`INSERT INTO ${w.schema}.applied (n, key) VALUES ($1, $2)`, [n, event.key]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => (await w.applied()).length >= 12, 30_000, 'all twelve applied');
  await consumer.close();
  const rows = await w.applied();
  assert.equal(rows.length, 12, 'each applied once');
  assert.deepEqual(
    rows.filter((row) => row.key === 'P').map((row) => row.n),
    [2, 6, 10],
    'key P in order: 6 and 10 waited for the retried 2',
  );
  for (const key of ['a', 'b']) {
    const order = rows.filter((row) => row.key === key).map((row) => row.n);
    assert.deepEqual(
      order,
      [...order].sort((x, y) => x - y),
      `key ${key} in order`,
    );
  }
});
