// Issue 30 item 1 on the real broker: the console's health reads a group's lag per partition from Kafka (records;
// seconds unknown there), and a redrive job sends to Kafka, saying it could not check later events of the key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsole } from '../../src/console/console.ts';
import { seedConsole } from '../support/console-seed.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

// biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are asserted field by field
const json = async (response: Response | Promise<Response>): Promise<any> => (await response).json();

test('console on Kafka: lag per partition, and a redrive job sent to the broker', async (t) => {
  if (!(await needs(t, 'postgres', 'kafka'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 2);
  const group = randomName('console');
  const seeded = await seedConsole(db, schema, topic, group);
  await db.query(`INSERT INTO ${schema}.consumer_groups (name) VALUES ($1)`, [group]);
  const producer = transport.producer({ clientId: 'console-test' });
  await producer.send([
    { topic, key: 'a', value: Buffer.from('1'), headers: {} },
    { topic, key: 'b', value: Buffer.from('2'), headers: {} },
  ]);
  await producer.close();
  const tokens = { operator: 'kafka-operator-token', reader: 'kafka-reader-token1' };
  const ops = createConsole({ db, schema, transport: 'kafka', topics: [topic], tokens });
  const base = await ops.start();
  t.after(() => ops.close());
  const auth = { authorization: `Bearer ${tokens.operator}` };

  const health = await json(fetch(`${base}/api/health`, { headers: auth }));
  assert.deepEqual(
    health.lag.map((p: { group: string; partition: number; lagSeconds: null }) => [p.group, p.partition, p.lagSeconds]),
    [
      [group, 0, null],
      [group, 1, null],
    ],
  );
  assert.equal(
    health.lag.reduce((sum: number, p: { lag: number }) => sum + p.lag, 0),
    2,
    'never committed: counted from 0',
  );
  assert.ok(health.findings.some((f: { check: string; level: string }) => f.check === 'kafka' && f.level === 'ok'));

  const { csrf } = await json(fetch(`${base}/api/session`, { headers: auth }));
  const started = await fetch(`${base}/api/jobs`, {
    method: 'POST',
    headers: { ...auth, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ ids: [seeded.ids.header] }),
  });
  const job = await json(started);
  assert.equal(job.laterAppliedChecked, false, 'the log is in Kafka: not checked, and said so');
  const read = () => json(fetch(`${base}/api/jobs/${job.id}`, { headers: auth }));
  await eventually(async () => (await read()).status !== 'running', 20_000, 'the job');
  const done = await read();
  assert.deepEqual([done.status, done.redriven], ['done', 1], done.error);
  assert.match(done.target, /^kafka: Kafka at /);
  const admin = transport.admin();
  const ends = await admin.endOffsets(topic);
  await admin.close();
  assert.equal(
    ends.reduce((sum, end) => sum + Number(end.offset), 0),
    3,
    'the letter went to the broker',
  );
});
