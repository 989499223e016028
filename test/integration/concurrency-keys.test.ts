// Keys in parallel inside one partition (issue 13, item 3): `concurrency: { mode: 'key' }` runs different keys at once,
// one key strictly in order; a poison key does not hold the others; the committed offset never passes the lowest
// unfinished record, so a crash with in-flight gaps redelivers and never skips (its naive twin loses a record).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { ConsumerOptions } from '../../src/consumer/options.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Kind = 'postgres' | 'kafka';

async function world(t: TestContext, kind: Kind = 'postgres') {
  if (!(await needs(t, ...(kind === 'kafka' ? (['kafka', 'postgres'] as const) : (['postgres'] as const)))))
    return undefined;
  const { db, schema } = await freshSchema(t);
  await db.query(`CREATE TABLE ${schema}.applied (seq serial PRIMARY KEY, n int NOT NULL, key text)`);
  const transport: Transport =
    kind === 'kafka'
      ? kafkaTransport({ clientId: 'concurrency-keys' })
      : postgresTransport({ db, schema, leaseMs: 1000, heartbeatMs: 200, pollIntervalMs: 20, logger: silentLogger });
  const topic = randomName('keys').replace('_', '-');
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: 1 }]);
  t.after(async () => {
    await admin.deleteTopics([topic, `${topic}-retry-1`, `${topic}-dlt`]).catch(() => undefined);
    await admin.close();
  });
  const produce = async (records: { n: number; key: string }[]) => {
    const producer = transport.producer();
    await producer.send(
      records.map(({ n, key }) =>
        encodeEvent(createEvent({ topic, type: 'keys.test', source: '/keys', key, data: { n } })),
      ),
    );
    await producer.close();
  };
  const applied = async () =>
    (await db.query<{ n: number; key: string }>(`SELECT n, key FROM ${schema}.applied ORDER BY seq`)).rows;
  return { db, schema, transport, topic, produce, applied };
}

function consumer(db: Db, w: NonNullable<Awaited<ReturnType<typeof world>>>, options: Partial<ConsumerOptions>) {
  return createConsumer({
    db,
    transport: w.transport,
    group: randomName('g'),
    topics: [w.topic],
    schema: w.schema,
    logger: silentLogger,
    ...(options.batchHandler ? {} : { handler: async () => undefined }),
    ...options,
  } as ConsumerOptions);
}

for (const kind of ['postgres', 'kafka'] as const) {
  describe(`keys in parallel inside a partition (${kind})`, () => {
    test('per-key order under random handler latency; keys overlap', async (t) => {
      const w = await world(t, kind);
      if (!w) return;
      const keys = 8;
      const perKey = 12;
      const records = Array.from({ length: keys * perKey }, (_, n) => ({ n, key: `k${n % keys}` }));
      await w.produce(records);
      let inFlight = 0;
      let most = 0;
      const c = consumer(w.db, w, {
        concurrency: { mode: 'key', max: keys },
        handler: async (event, { tx }) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await sleep(Math.random() * 15);
          inFlight -= 1;
          await tx.query(`INSERT INTO ${w.schema}.applied (n, key) VALUES ($1, $2)`, [
            (event.data as { n: number }).n,
            event.key,
          ]);
        },
      });
      t.after(() => c.close());
      await c.start();
      await eventually(async () => (await w.applied()).length >= records.length, 30_000, 'all applied');
      await c.close();
      const rows = await w.applied();
      assert.equal(rows.length, records.length, 'each record applied once');
      for (let k = 0; k < keys; k++) {
        const order = rows.filter((row) => row.key === `k${k}`).map((row) => row.n);
        assert.deepEqual(
          order,
          records.filter((r) => r.key === `k${k}`).map((r) => r.n),
          `key k${k} in order`,
        );
      }
      assert.ok(most > 1, `keys ran at once (${most} handlers in flight at most)`);
    });

    test('a batch of many keys runs its lanes at once, each key in order', async (t) => {
      const w = await world(t, kind);
      if (!w) return;
      const keys = 10;
      const records = Array.from({ length: keys * 5 }, (_, n) => ({ n, key: `k${n % keys}` }));
      await w.produce(records);
      let inFlight = 0;
      let most = 0;
      const c = consumer(w.db, w, {
        concurrency: { mode: 'key', max: 4 },
        handler: async (event, { tx }) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await sleep(2 + Math.random() * 10);
          inFlight -= 1;
          await tx.query(`INSERT INTO ${w.schema}.applied (n, key) VALUES ($1, $2)`, [
            (event.data as { n: number }).n,
            event.key,
          ]);
        },
      });
      t.after(() => c.close());
      await c.start();
      await eventually(async () => (await w.applied()).length >= records.length, 30_000, 'all applied');
      await c.close();
      const rows = await w.applied();
      assert.equal(rows.length, records.length);
      for (let k = 0; k < keys; k++) {
        const order = rows.filter((row) => row.key === `k${k}`).map((row) => row.n);
        assert.deepEqual(
          order,
          records.filter((r) => r.key === `k${k}`).map((r) => r.n),
          `key k${k} in order`,
        );
      }
      assert.equal(most, 4, 'four lanes at once (max 4), never more');
    });

    test('a batch handler gets each lane of a batch in one call, each key in order', async (t) => {
      const w = await world(t, kind);
      if (!w) return;
      const records = Array.from({ length: 40 }, (_, n) => ({ n, key: `k${n % 4}` }));
      await w.produce(records);
      let calls = 0;
      const c = consumer(w.db, w, {
        concurrency: { mode: 'key', max: 4 },
        batchHandler: async (events, { tx }) => {
          calls += 1;
          assert.equal(new Set(events.map((event) => event.key)).size, 1, 'one key per call');
          await sleep(Math.random() * 10);
          for (const event of events) {
            await tx.query(`INSERT INTO ${w.schema}.applied (n, key) VALUES ($1, $2)`, [
              (event.data as { n: number }).n,
              event.key,
            ]);
          }
        },
      });
      t.after(() => c.close());
      await c.start();
      await eventually(async () => (await w.applied()).length >= records.length, 30_000, 'all applied');
      await c.close();
      const rows = await w.applied();
      assert.equal(rows.length, records.length);
      for (let k = 0; k < 4; k++) {
        const order = rows.filter((row) => row.key === `k${k}`).map((row) => row.n);
        assert.deepEqual(
          order,
          records.filter((r) => r.key === `k${k}`).map((r) => r.n),
          `key k${k} in order`,
        );
      }
      assert.ok(calls < records.length, `records of a key batched together (${calls} calls for ${records.length})`);
    });

    test('a poison record in one key is forwarded and dead-lettered while the other keys flow', async (t) => {
      const w = await world(t, kind);
      if (!w) return;
      const records = Array.from({ length: 30 }, (_, n) => ({ n, key: n === 3 ? 'poison' : `k${n % 5}` }));
      await w.produce(records);
      const c = consumer(w.db, w, {
        concurrency: { mode: 'key', max: 8 },
        retryTopics: { delaysMs: [100] },
        handler: async (event, { tx }) => {
          const n = (event.data as { n: number }).n;
          if (n === 3) throw new Error('poison');
          await tx.query(`INSERT INTO ${w.schema}.applied (n, key) VALUES ($1, $2)`, [n, event.key]);
        },
      });
      t.after(() => c.close());
      await c.start();
      await eventually(async () => (await w.applied()).length >= 29, 30_000, 'the other 29 applied');
      const letters = deadLetterStore({ schema: w.schema });
      await eventually(async () => (await letters.list(w.db)).length >= 1, 30_000, 'the poison record dead-lettered');
      await c.close();
      const applied = (await w.applied()).map((row) => row.n).sort((a, b) => a - b);
      assert.deepEqual(
        applied,
        records.map((r) => r.n).filter((n) => n !== 3),
      );
      assert.equal((await letters.list(w.db)).length, 1);
    });
  });
}

describe('a crash with in-flight gaps (keys in parallel)', () => {
  const child = fileURLToPath(new URL('./concurrency-crash.child.ts', import.meta.url));
  const run = (args: string[]) =>
    new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      const proc = execFile(process.execPath, ['--import', 'tsx', child, ...args], { timeout: 30_000 });
      proc.on('exit', (code, signal) => resolve({ code, signal }));
    });

  async function crashAndRestart(t: TestContext, mode: 'key' | 'naive') {
    const w = await world(t);
    if (!w) return undefined;
    const total = 10;
    // Record 0 (key a) is slow and dies with the process; records 1..9 (other keys) finish while it is in flight.
    await w.produce(Array.from({ length: total }, (_, n) => ({ n, key: n === 0 ? 'a' : `b${n}` })));
    const group = randomName('g');
    const args = [w.schema, w.topic, group];
    const crashed = await run([...args, mode, 'crash', String(total)]);
    assert.equal(crashed.signal, 'SIGKILL', 'the consumer was killed with record 0 in flight');
    const committed = (
      await w.db.query<{ next_offset: string }>(
        `SELECT next_offset::text FROM ${w.schema}.log_offsets WHERE group_id = $1`,
        [group],
      )
    ).rows[0]?.next_offset;
    await run([...args, mode, 'none', String(total)]);
    return { committed, applied: (await w.applied()).map((row) => row.n).sort((a, b) => a - b) };
  }

  test('killed with record 0 in flight and 1..9 applied: the offset stayed at 0, the restart applies 0, none twice', async (t) => {
    const result = await crashAndRestart(t, 'key');
    if (!result) return;
    assert.ok(result.committed === undefined || result.committed === '0', `committed ${result.committed}`);
    assert.deepEqual(result.applied, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test('naive twin (commits the highest finished offset) under the same kill loses record 0', async (t) => {
    const result = await crashAndRestart(t, 'naive');
    if (!result) return;
    assert.equal(result.committed, '10');
    assert.deepEqual(result.applied, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
