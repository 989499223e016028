// An embedded-log member (the `postgres` transport on a server) whose connection goes silent while it applies: its
// lease heartbeats go nowhere, and so does its open transaction, which holds the dedup claims of its batch. Its lease
// expires after `leaseMs` and another member takes the partition; the server ends the silent session at its
// idle-in-transaction timeout, which lets the other member's claim through. Every event applied once, in order per
// key, within seconds. The naive twin (pgDb's timeouts off, as before issue 37): the silent session keeps its locks,
// the other member's claim waits behind them, and the partition stays stuck for the whole window.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { PgDbOptions } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { proxiedDb } from '../support/proxied-db.ts';
import { needs } from '../support/services.ts';

const total = 100;
const windowMs = 6000;
const lease = { leaseMs: 1000, heartbeatMs: 200, pollIntervalMs: 20, logger: silentLogger };

async function silencedMember(t: TestContext, timeouts: PgDbOptions) {
  const { db: direct, schema } = await freshSchema(t);
  await direct.query(
    `CREATE TABLE ${schema}.applied (seq bigserial PRIMARY KEY, event_id uuid NOT NULL, key text NOT NULL, n int NOT NULL)`,
  );
  const { db: silenced, proxy } = await proxiedDb(t, { max: 3, ...timeouts });
  const topic = 'orders';
  const producer = postgresTransport({ db: direct, schema, ...lease });
  await producer.admin().createTopics([{ topic, partitions: 1 }]);
  let silencedAt = 0;
  let other: ReturnType<typeof createConsumer> | undefined;
  const member = (db: Db, first: boolean) =>
    createConsumer({
      db,
      transport: postgresTransport({ db, schema, ...lease }),
      group: 'g',
      topics: [topic],
      schema,
      logger: silentLogger,
      maxBatchSize: 20,
      retry: { baseMs: 50, capMs: 200 },
      handler: async (event, { tx }) => {
        const { n } = event.data as { n: number };
        if (first && n === 30 && !other) {
          proxy.silence(); // heartbeats, this transaction and its COMMIT: all go nowhere from now on
          silencedAt = Date.now();
          other = member(direct, false);
          await other.start();
        }
        await tx.query(`INSERT INTO ${schema}.applied (event_id, key, n) VALUES ($1, $2, $3)`, [
          event.id,
          event.key,
          n,
        ]);
      },
    });
  const first = member(silenced, true);
  // Called before the schema is dropped (after hooks run first to last): a silent session would hold the DROP.
  const release = async () => {
    await proxy.close(); // the silent session's socket closed: the server rolls it back and frees its locks
    await other?.close();
    await first.close();
  };
  await first.start();
  const send = producer.producer();
  await send.send(
    Array.from({ length: total }, (_, n) =>
      encodeEvent(createEvent({ topic, type: 'x', source: '/t', key: `k${n % 7}`, data: { n } })),
    ),
  );
  await send.close();
  const counts = async () =>
    (
      await direct.query<{ total: number; distinct: number }>(
        `SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM ${schema}.applied`,
      )
    ).rows[0]!;
  const outOfOrder = async () =>
    (
      await direct.query(
        `SELECT 1 FROM (SELECT n, lag(n) OVER (PARTITION BY key ORDER BY seq) AS before FROM ${schema}.applied) s
          WHERE n <= before`,
      )
    ).rowCount;
  await eventually(async () => silencedAt > 0, 10_000, 'the member silenced');
  return { counts, outOfOrder, silencedAt, release };
}

describe('an embedded-log member whose lease heartbeats are silenced', { concurrency: 2 }, () => {
  test('its lease moves on, the server ends its silent transaction: once, in order, within seconds', async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const timeouts = { statementTimeoutMs: 1000, idleInTransactionTimeoutMs: 1000, queryTimeoutMs: 1500 };
    const { counts, outOfOrder, silencedAt, release } = await silencedMember(t, timeouts);
    try {
      await eventually(async () => (await counts()).distinct === total, windowMs, 'every event applied');
      const took = Date.now() - silencedAt;
      await sleep(300);
      assert.deepEqual(await counts(), { total, distinct: total }, 'every event applied once');
      assert.equal(await outOfOrder(), 0, 'order per key kept');
      assert.ok(took < windowMs, `taken over ${took} ms after the silence`);
    } finally {
      await release();
    }
  });

  test('naive twin: with the timeouts off the silent session holds the partition for the whole window', async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const off = { statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0, queryTimeoutMs: 0 };
    const { counts, release } = await silencedMember(t, off);
    await sleep(windowMs);
    const { distinct } = await counts();
    await release();
    assert.ok(distinct < total, `stuck: ${total - distinct} events still not applied after ${windowMs} ms`);
  });
});
