// Key order under a refusal when the client splits one key's rows into several batches of one send. By default the
// idempotent producer retries the batches after a refused one under a new epoch, so a later row of the key can be
// written in the very send that failed. With `enable.gapless.guarantee` the refusal is fatal instead: nothing after
// the refused batch is written, the relay replaces the producer (producerFactory) and bisects. Real broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, freshSchema, outboxCount } from '../support/fixtures.ts';
import { readToEnd } from '../support/read-topic.ts';
import { paddedEvents, refusingRelay } from '../support/refusing-relay.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

/** Relays K small, K 300 KB, K small, K small, then 20 others, one record per batch; returns K's order on the topic. */
async function run(t: import('node:test').TestContext, rdkafka: Record<string, string | number | boolean>) {
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 100_000, prefix: 'split' });
  const event = paddedEvents(topic);
  const outbox = createOutbox({ schema });
  await db.transaction((tx) =>
    outbox.enqueue(tx, [
      event('K', 1),
      event('K', 2, 300_000),
      event('K', 3),
      event('K', 4),
      ...Array.from({ length: 20 }, (_, i) => event(`other-${i}`, 100 + i)),
    ]),
  );
  // One record per batch: K's rows travel in four batches of the same send.
  const transport = kafkaTransport({ clientId: 'effectively-test', rdkafka: { 'batch.num.messages': 1, ...rdkafka } });
  const { refused } = await refusingRelay(t, {
    db,
    schema,
    producer: transport.producer(),
    producerFactory: () => transport.producer(),
  });
  await eventually(async () => refused.length === 1, 30_000, 'the big row set aside');
  await eventually(async () => (await outboxCount(db, schema, `key <> 'K'`)) === 0, 30_000, 'the other rows published');
  const order: number[] = [];
  let others = 0;
  for (const record of await readToEnd(transport, topic)) {
    const decoded = decodeEvent(record);
    const { n } = decoded.data as { n: number };
    if (decoded.key === 'K' && !order.includes(n)) order.push(n);
    if (decoded.key !== 'K') others++;
  }
  assert.ok(others >= 20, 'the other rows arrived');
  return order;
}

test("gapless producer: K's rows behind the refused one are not written, even in the send that failed", async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  assert.deepEqual(await run(t, { 'enable.gapless.guarantee': true }), [1]);
});

test('naive twin: the default idempotent producer writes K 3 and 4 in the failing send, ahead of the refused K 2', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const order = await run(t, {});
  assert.ok(order.includes(3), `K's order on the topic: ${order.join(', ')}`);
});
