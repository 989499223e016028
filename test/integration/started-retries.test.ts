// A partition whose first batch starts where an earlier one died is applied record by record, each start counted in the
// database first, and a record started alone more than maxAttempts times is given up on as a killer (started.ts). A
// retry in the same process (an outage, a contention, a silent connection's watchdog, none counted as an attempt) is no
// death: it used to count a start all the same, so three lock waits or silent connections in a row turned an innocent
// record into a dead letter, under faults the consumer must ride out (the chaos kit's lost event, issue 35). The twin:
// the same contention, each try by a new consumer (a new assignment, as after a death), is counted and given up on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Queryable } from '../../src/db/port.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { embeddedLog, sendKeyed } from '../support/embedded-log.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** A real serialization failure (SQLSTATE 40001): contention, which counts as no record's attempt. */
const contention = (tx: Queryable) =>
  tx.query(`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$`);

async function setup(t: import('node:test').TestContext) {
  const log = await embeddedLog(t);
  const { db, schema, transport } = log;
  await db.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
  const topic = 'contended';
  await sendKeyed(transport, topic, ['a', 'b', 'c']);
  // Record 0 was started by a consumer that died in its batch: the partition's next batch is careful.
  await db.query(
    `INSERT INTO ${schema}.started_records (consumer, topic, partition, "offset", starts, alone) VALUES ('g', $1, 0, 0, 1, 0)`,
    [topic],
  );
  const rows = async (sql: string) => (await db.query<{ n: number }>(sql)).rows.map((row) => row.n);
  const applied = () => rows(`SELECT n FROM ${schema}.applied ORDER BY n`);
  const dead = () => rows(`SELECT "offset"::int AS n FROM ${schema}.dead_letters ORDER BY 1`);
  return { ...log, topic, applied, dead };
}

test('a careful record retried in the same process after contention is applied, not given up as a killer', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { consumerOf, schema, topic, applied, dead } = await setup(t);
  let tries = 0;
  const consumer = createConsumer({
    ...consumerOf(topic),
    maxAttempts: 2,
    retry: { baseMs: 10, capMs: 50 },
    handler: async (event, { tx }) => {
      const { n } = event.data as { n: number };
      if (n === 0 && ++tries <= 4) await contention(tx);
      await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [n]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => (await applied()).length === 3, 20_000, 'every record applied');
  assert.equal(tries, 5, 'four tries met contention, the fifth applied');
  assert.deepEqual(await applied(), [0, 1, 2], 'each record applied once');
  assert.deepEqual(await dead(), [], 'nothing given up on');
});

test('twin: the same contention, each try by a new consumer (an assignment that died), is counted and given up', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { consumerOf, schema, topic, applied, dead } = await setup(t);
  let tries = 0;
  for (let assignment = 0; assignment < 4 && (await dead()).length === 0; assignment++) {
    const before = tries;
    const consumer = createConsumer({
      ...consumerOf(topic),
      maxAttempts: 2,
      retry: { baseMs: 10_000, capMs: 10_000 },
      handler: async (event, { tx }) => {
        const { n } = event.data as { n: number };
        if (n === 0) {
          tries += 1;
          await contention(tx);
        }
        await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [n]);
      },
    });
    await consumer.start();
    await eventually(async () => tries > before || (await dead()).length > 0, 20_000, 'record 0 tried or given up');
    await consumer.close();
    await sleep(50);
  }
  assert.deepEqual(
    await dead(),
    [0],
    'record 0 given up on after maxAttempts starts alone, each in its own assignment',
  );
  assert.equal(tries, 2, 'tried twice, then given up without its handler');
  assert.ok(!(await applied()).includes(0), 'record 0 never applied');
});
