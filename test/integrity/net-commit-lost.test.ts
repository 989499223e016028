// A COMMIT whose answer is lost: the consumer's connection to PostgreSQL goes silent right after the COMMIT of a
// batch left the client (the fault proxy forwards it, then nothing more either way). The server committed; the client
// cannot know. Its watchdog fails the transaction, the batch is tried again on a fresh connection, and the dedup rows
// the lost COMMIT wrote make the second try a no-op: every event applied once. The naive twin (no dedup rows, the
// transaction simply tried again on an error) applies that batch twice.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { proxiedDb } from '../support/proxied-db.ts';
import { needs } from '../support/services.ts';

const total = 200;
/** The watchdog that notices the silent COMMIT (a short one: the test's time is the fault's). */
const timeouts = { statementTimeoutMs: 500, idleInTransactionTimeoutMs: 1000, queryTimeoutMs: 800 };

async function setup(t: import('node:test').TestContext) {
  const { db: direct, schema } = await freshSchema(t);
  await direct.query(`CREATE TABLE ${schema}.applied (event_id uuid NOT NULL, n int NOT NULL)`);
  const { transport, topic } = await freshTopic(t, 1);
  const { db, proxy } = await proxiedDb(t, timeouts);
  const events = Array.from({ length: total }, (_, n) =>
    createEvent({ topic, type: 'x', source: '/t', key: `k${n % 7}`, data: { n } }),
  );
  const counts = async () =>
    (
      await direct.query<{ total: number; distinct: number }>(
        `SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM ${schema}.applied`,
      )
    ).rows[0]!;
  const send = async () => {
    const producer = transport.producer();
    await producer.send(events.map(encodeEvent));
    await producer.close();
  };
  return { db, schema, transport, topic, proxy, counts, send };
}

const insert = (db: Pick<Db, 'query'>, schema: string, id: string, n: number) =>
  db.query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [id, n]);

describe('a COMMIT whose answer is lost', { concurrency: 2 }, () => {
  test('effectively: the outcome is unknown, the batch is neither lost nor applied twice', async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    const { db, schema, transport, topic, proxy, counts, send } = await setup(t);
    let lost: Promise<void> | undefined;
    const failures: string[] = [];
    const consumer = createConsumer({
      db,
      transport,
      group: randomName('g'),
      topics: [topic],
      schema,
      logger: { ...silentLogger, warn: (message) => void failures.push(message) },
      maxBatchSize: 25,
      retry: { baseMs: 50, capMs: 200 },
      handler: async (event, { tx }) => {
        const { n } = event.data as { n: number };
        // In the batch of event 60: the next COMMIT on this pool is that batch's.
        if (n === 60 && !lost) lost = proxy.silenceAfter('COMMIT');
        await insert(tx, schema, event.id, n);
      },
    });
    t.after(() => consumer.close());
    await consumer.start();
    await send();
    await eventually(async () => (await counts()).distinct === total, 20_000, 'every event applied');
    await sleep(300); // a second application of the silenced batch would land now
    assert.ok(lost, 'the COMMIT was sent and its answer lost');
    await lost;
    proxy.heal();
    assert.deepEqual(await counts(), { total, distinct: total }, 'every event applied exactly once');
    assert.ok(failures.length > 0, 'the unanswered COMMIT failed its transaction (the watchdog), it did not hang');
  });

  test('naive twin: without dedup rows, trying the transaction again applies the batch twice', async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    const { db, schema, transport, topic, proxy, counts, send } = await setup(t);
    let lost: Promise<void> | undefined;
    const raw = transport.consumer({
      group: randomName('naive'),
      topics: [topic],
      maxBatchSize: 25,
      fromBeginning: true,
    });
    t.after(() => raw.close());
    await raw.run(async (batch, control) => {
      for (;;) {
        try {
          await db.transaction(async (tx) => {
            for (const record of batch.records) {
              const n = JSON.parse(record.value!.toString()).n as number;
              if (n === 60 && !lost) lost = proxy.silenceAfter('COMMIT');
              await insert(tx, schema, record.headers.ce_id!.toString(), n);
            }
          });
          break;
        } catch {
          await sleep(50); // "it failed, so it did not happen": try again
        }
      }
      control.resolve(batch.records.at(-1)!.offset);
      await raw.commit([positionAfter(batch.records.at(-1)!)]);
    });
    await send();
    await eventually(async () => (await counts()).distinct === total, 20_000, 'every event applied');
    await lost;
    proxy.heal();
    const { total: rows } = await counts();
    assert.ok(rows > total, `the lost COMMIT's batch was applied twice (${rows - total} rows too many)`);
  });
});
