// On the real broker (issue 27, item 3): `deadLetters: false` stops a partition on a record that exhausted its
// attempts (paused, no timer resumes it). A stop belongs to the assignment: after an eager rebalance (another member
// joins the group for another topic) the partition comes back to the same member and must be read again, its record
// tried afresh, as another member would. The client keeps a partition's pause across the unassignment and the new
// assignment, so the consumer resumes a stopped partition at its revoke; before, the "stopped" mark and the pause
// stayed, and the partition stayed paused for good. Runs in about 10 s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('kafka, deadLetters: false: a stopped partition goes through a rebalance and is read again', async (t) => {
  if (!(await needs(t, 'kafka')) || !(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const { topic: other } = await freshTopic(t, 1);
  const group = randomName('g');
  let fixed = false;
  let calls = 0;
  let applied = false;
  let assignments = 0;
  const stops: string[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    logger: silentLogger,
    deadLetters: false,
    maxAttempts: 1,
    onStopped: (record) => stops.push(record.offset),
    onAssign: () => {
      assignments += 1;
    },
    handler: async () => {
      calls += 1;
      if (!fixed) throw new Error('cannot be applied until fixed');
    },
    onOutcome: (_, outcome) => {
      if (outcome === 'applied') applied = true;
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const producer = transport.producer();
  await producer.send([encodeEvent(createEvent({ topic, type: 't', source: '/stop', key: 'k', data: {} }))]);
  await producer.close();
  await eventually(async () => stops.length === 1, 30_000, 'the partition stopped');
  fixed = true;
  const before = assignments;
  const joiner = transport.consumer({ group, topics: [other], maxBatchSize: 10, fromBeginning: true });
  t.after(() => joiner.close());
  await joiner.run(async () => undefined);
  await eventually(async () => assignments > before, 30_000, 'the member assigned again after the rebalance');
  await eventually(async () => applied, 30_000, 'the record tried afresh in the new assignment');
  assert.equal(calls, 2);
  assert.equal(stops.length, 1);
});
