// On the real broker, a real crash: a consumer process dead-letters record 1 and is SIGKILLed before the offset commit
// past it reaches the broker. The record would pass if tried again (it is refused only until its dead letter exists),
// so before, the next member applied it: applied AND dead. The next member now looks up the group's dead letters at
// its first batch of the partition and passes it over; records 0 and 2 are applied once each (dedup absorbs what the
// lost commit redelivers). The same check with the lookup off fails (verified by hand: record 1 applied by the second
// member); test/integration/given-up-redelivered.test.ts keeps both variants on the embedded log.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('kafka, a real crash after a dead letter: the next member passes the record over, never applies it', async (t) => {
  if (!(await needs(t, 'kafka')) || !(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await db.query(`CREATE TABLE ${schema}.applied (n int NOT NULL, pid int NOT NULL)`);
  const { transport, topic } = await freshTopic(t, 1);
  const producer = transport.producer();
  await producer.send(
    [0, 1, 2].map((n) => encodeEvent(createEvent({ topic, type: 't', source: '/crash', key: `k${n}`, data: { n } }))),
  );
  await producer.close();
  const group = randomName('g');

  const child = fileURLToPath(new URL('./given-up-crash.child.ts', import.meta.url));
  const exit = await new Promise<string | null>((resolve) => {
    const proc = execFile(process.execPath, ['--import', 'tsx', child, schema, topic, group], { timeout: 90_000 });
    proc.on('exit', (_, signal) => resolve(signal));
  });
  assert.equal(exit, 'SIGKILL', 'the first member died right after keeping the dead letter');
  const count = async (sql: string) => (await db.query<{ c: number }>(sql)).rows[0]!.c;
  assert.equal(await count(`SELECT count(*)::int AS c FROM ${schema}.dead_letters`), 1);

  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    logger: silentLogger,
    sessionTimeoutMs: 6000,
    handler: async (event, { tx }) => {
      await tx.query(`INSERT INTO ${schema}.applied (n, pid) VALUES ($1, $2)`, [(event.data as { n: number }).n, 0]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const admin = transport.admin();
  t.after(() => admin.close());
  await eventually(
    async () => (await admin.committedOffsets(group, topic)).some((c) => c.partition === 0 && c.offset === '3'),
    60_000,
    'the group committed past the three records',
  );
  const { rows } = await db.query<{ n: number; c: number }>(
    `SELECT n, count(*)::int AS c FROM ${schema}.applied GROUP BY n ORDER BY n`,
  );
  assert.deepEqual(
    rows.map((row) => [row.n, row.c]),
    [
      [0, 1],
      [2, 1],
    ],
    'record 1 is a dead letter only; the others applied once each',
  );
  assert.equal(await count(`SELECT count(*)::int AS c FROM ${schema}.dead_letters`), 1);
});
