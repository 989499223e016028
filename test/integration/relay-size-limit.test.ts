// Key order under a record larger than the PRODUCER's `message.max.bytes` (the topic would take it). librdkafka refuses
// such a record synchronously inside produce(); the client's sendBatch rejected only that record and went on producing
// the rest of the send, so a later row of its key was written while it was set aside. The transport now refuses the
// record before anything of the send is produced, and stops producing once one produce() throws. Real broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Producer } from '../../src/transport/port.ts';
import { eventually, freshSchema, outboxCount } from '../support/fixtures.ts';
import { keyOrder } from '../support/read-topic.ts';
import { paddedEvents, refusingRelay } from '../support/refusing-relay.ts';
import { sendBatchProducer } from '../support/send-batch-producer.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

const producerLimit = 100_000;
const rdkafka = { 'message.max.bytes': producerLimit, 'enable.gapless.guarantee': true };

/** Relays K 1, K 2 (200 KB: over the producer's limit, under the topic's), K 3, then 10 others; K's order on the topic. */
async function run(t: import('node:test').TestContext, producer: () => Producer) {
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 1_000_000, prefix: 'limit' });
  const event = paddedEvents(topic);
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, [
      event('K', 1),
      event('K', 2, 200_000),
      event('K', 3),
      ...Array.from({ length: 10 }, (_, i) => event(`other-${i}`, 100 + i)),
    ]),
  );
  const { refused } = await refusingRelay(t, { db, schema, producerFactory: producer });
  await eventually(async () => refused.length === 1, 30_000, 'the big row set aside');
  await eventually(async () => (await outboxCount(db, schema, `key <> 'K'`)) === 0, 30_000, 'the other rows published');
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  return { order: await keyOrder(transport, topic, 'K'), code: refused[0]?.errorCode };
}

test('a record over the producer message.max.bytes: set aside, nothing of its key written behind it', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const transport = kafkaTransport({ clientId: 'effectively-test', rdkafka });
  const { order, code } = await run(t, () => transport.producer());
  assert.equal(code, 'ERR_MSG_SIZE_TOO_LARGE');
  assert.deepEqual(
    order.filter((n, i) => order.indexOf(n) === i),
    [1],
    `K's order on the topic: ${order.join(', ')}`,
  );
});

test("naive twin: the client's sendBatch writes K 3 while K 2 is set aside", async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { order } = await run(t, () => sendBatchProducer(rdkafka));
  assert.ok(order.includes(3), `K's order on the topic: ${order.join(', ')}`);
});
