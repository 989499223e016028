// A send larger than the Kafka client's local queue (`queue.buffering.max.messages` / `.kbytes`): produce() throws
// `Local: Queue full` part-way. The client's sendBatch went on producing, the pass failed as transient and came again:
// the head of the chunk was written on every pass and nothing behind it ever went out. The transport now stops at the
// first record the queue cannot take, the relay keeps the acknowledged head and goes on with the rest. Real broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Producer } from '../../src/transport/port.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { sendBatchProducer } from '../support/send-batch-producer.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

const rows = 30;
// A queue of 4 records: a chunk of 30 never fits at once.
const rdkafka = { 'queue.buffering.max.messages': 4 };

async function run(t: import('node:test').TestContext, producer: () => Producer, until: 'published' | 'passes') {
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 1_000_000, prefix: 'queue' });
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(
      tx,
      Array.from({ length: rows }, (_, n) => createEvent({ topic, type: 'x', source: '/t', key: 'K', data: { n } })),
    ),
  );
  let failedPasses = 0;
  const logger = { ...silentLogger, error: () => void failedPasses++ };
  const relay = createRelay({ db, schema, producerFactory: producer, errorBackoffMs: 50, logger });
  t.after(() => relay.close());
  await relay.start();
  const left = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
  if (until === 'published') await eventually(async () => (await left()) === 0, 30_000, 'every row published');
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const admin = transport.admin();
  const written = async () => (await admin.endOffsets(topic)).reduce((sum, end) => sum + Number(end.offset), 0);
  // Passes can fail faster than the queue drains (a loaded machine): wait for what the twin shows, a queue's worth of
  // records written more than once, not for a count of passes.
  if (until === 'passes')
    await eventually(
      async () => failedPasses >= 3 && (await written()) > rdkafka['queue.buffering.max.messages'],
      30_000,
      'three failed passes and the head written again',
    );
  await relay.close();
  const total = await written();
  await admin.close();
  const order = (await readTopic(transport, topic, total)).map(
    (record) => (decodeEvent(record).data as { n: number }).n,
  );
  return { order, left: await left() };
}

test('a chunk over the client queue: every row written once, in order', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const transport = kafkaTransport({ clientId: 'effectively-test', rdkafka });
  const { order } = await run(t, () => transport.producer(), 'published');
  assert.deepEqual(
    order,
    Array.from({ length: rows }, (_, n) => n),
  );
});

test("naive twin: the client's sendBatch fails every pass, writes the head again and again, the rest never", async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { order, left } = await run(t, () => sendBatchProducer(rdkafka), 'passes');
  assert.equal(left, rows, 'nothing deleted from the outbox');
  assert.ok(order.length > new Set(order).size, `the head written again: ${order.join(', ')}`);
});
