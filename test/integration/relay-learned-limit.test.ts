// After the broker refused a row of a topic for its size, the relay knows only that the topic's limit is below that
// row: a smaller row may still be over it. One transaction enqueues L 1 (300 KB) on a topic that takes 100 KB; once it
// is set aside, another enqueues K 1 (200 KB: under the refused row, over the topic's limit), K 2 and another key's
// row. The producer makes one batch per record (as a record over the client's batch.size always is). Real PostgreSQL
// and the real broker. The naive twin (the limit learned as the refused row's size) is in test/unit/topic-limits.test.ts;
// this test failed the same way with that rule: K 2 on the topic while K 1 was set aside ([2], nothing held).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, freshSchema, outboxCount } from '../support/fixtures.ts';
import { keyOrder } from '../support/read-topic.ts';
import { paddedEvents, refusingRelay } from '../support/refusing-relay.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

/** K's rows on the topic while K 1 is set aside, and how many of K's rows the outbox holds then. */
async function run(t: TestContext): Promise<{ order: number[]; held: number }> {
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 100_000, prefix: 'r3-learned-limit' });
  const event = paddedEvents(topic);
  const transport = kafkaTransport({
    clientId: 'effectively-test',
    rdkafka: { 'batch.num.messages': 1, 'linger.ms': 0 },
  });
  const { refused } = await refusingRelay(t, { db, schema, producerFactory: () => transport.producer() });
  const outbox = createOutbox({ schema });
  await db.transaction((tx) => outbox.enqueue(tx, [event('L', 1, 300_000)]));
  await eventually(async () => refused.length === 1, 30_000, 'L 1 set aside');
  await db.transaction((tx) => outbox.enqueue(tx, [event('K', 1, 200_000), event('K', 2), event('other', 3)]));
  await eventually(async () => refused.length === 2, 30_000, 'K 1 set aside');
  await eventually(
    async () => (await outboxCount(db, schema, `key = 'other'`)) === 0,
    30_000,
    'the other row published',
  );
  return { order: await keyOrder(transport, topic, 'K'), held: await outboxCount(db, schema, `key = 'K'`) };
}

test("a row smaller than one refused for size, but over the topic's limit, is not overtaken by its key's next row", async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { order, held } = await run(t);
  assert.deepEqual(order, [], 'nothing of K on the topic while K 1 is set aside');
  assert.equal(held, 1, 'K 2 held in the outbox');
});
