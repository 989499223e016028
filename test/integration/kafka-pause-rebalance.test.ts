// On the real broker: a partition paused until its head record is due (a retry topic's delay) goes through an eager
// rebalance (another member joins the group for another topic) and comes back to the same member. The client keeps a
// partition's pause across the unassignment and the new assignment, so the consumer's resume timer is what resumes it
// once the record is due; a revoke must not drop that timer. A first version of the dead-letter lookup did: with the
// timer cleared at the revoke this test fails (the record never applied within 30 s; checked by hand), which also
// shows the client's pause outlives the rebalance. Runs in about 8 s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('kafka: a partition paused for a due time goes through a rebalance and is resumed when due', async (t) => {
  if (!(await needs(t, 'kafka')) || !(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const { topic: other } = await freshTopic(t, 1);
  const group = randomName('g');
  let calls = 0;
  let applied = false;
  let assignments = 0;
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    logger: silentLogger,
    retryTopics: { delaysMs: [6000] },
    onAssign: () => {
      assignments += 1;
    },
    handler: async () => {
      calls += 1;
      if (calls === 1) throw new TransientError('not yet');
    },
    onOutcome: (_, outcome) => {
      if (outcome === 'applied') applied = true;
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const producer = transport.producer();
  await producer.send([encodeEvent(createEvent({ topic, type: 't', source: '/pause', key: 'k', data: {} }))]);
  await producer.close();
  await eventually(async () => calls === 1, 30_000, 'the first attempt');
  const before = assignments;
  // The retry topic's partition is paused until the record is due; another member joins the group meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const joiner = transport.consumer({ group, topics: [other], maxBatchSize: 10, fromBeginning: true });
  t.after(() => joiner.close());
  await joiner.run(async () => undefined);
  await eventually(async () => assignments > before, 30_000, 'the member assigned again after the rebalance');
  await eventually(async () => applied, 30_000, 'the record applied from the retry topic once due');
  assert.equal(calls, 2);
});
