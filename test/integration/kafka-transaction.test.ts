// Kafka→Kafka: output records and the input offsets commit in one Kafka transaction.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeEvent, encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('a transactional producer commits its output and the consumed offsets together', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { transport, topic: input } = await freshTopic(t, 1);
  const { topic: output } = await freshTopic(t, 1);
  const group = randomName('g');
  const events = Array.from({ length: 5 }, (_, n) =>
    createEvent({ topic: input, type: 'x', source: '/t', key: `k${n}`, data: { n } }),
  );
  const plain = transport.producer();
  t.after(() => plain.close());
  await plain.send(events.map(encodeEvent));

  const producer = transport.producer({ transactionalId: randomName('tx') });
  t.after(() => producer.close());
  const consumer = transport.consumer({ group, topics: [input], maxBatchSize: 100, fromBeginning: true });
  t.after(() => consumer.close());
  let forwarded = 0;
  await consumer.run(async (batch, control) => {
    const last = batch.records.at(-1)!;
    await producer.sendInTransaction!(
      batch.records.map((record) => ({ ...encodeEvent(decodeEvent(record)), topic: output })),
      [positionAfter(last)],
      consumer,
    );
    control.resolve(last.offset);
    forwarded += batch.records.length;
  });
  await eventually(async () => forwarded === 5, 60_000, 'forwarding');

  const admin = transport.admin();
  t.after(() => admin.close());
  assert.equal((await admin.committedOffsets(group, input))[0]?.offset, '5');
  const ids: string[] = [];
  const reader = transport.consumer({
    group: randomName('r'),
    topics: [output],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  t.after(() => reader.close());
  await reader.run(async (batch, control) => {
    for (const record of batch.records) ids.push(decodeEvent(record).id);
    control.resolve(batch.records.at(-1)!.offset);
  });
  await eventually(async () => ids.length === 5, 30_000, 'the output to be readable (read_committed)');
  assert.deepEqual(
    ids,
    events.map((e) => e.id),
  );
});

test('sendInTransaction refuses a producer without a transactionalId', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { transport, topic } = await freshTopic(t, 1);
  const producer = transport.producer();
  const consumer = transport.consumer({
    group: randomName('g'),
    topics: [topic],
    maxBatchSize: 1,
    fromBeginning: true,
  });
  t.after(() => producer.close());
  t.after(() => consumer.close());
  await assert.rejects(producer.sendInTransaction!([], [], consumer), { code: 'EFF_INVALID_OPTIONS' });
});

/** Two inputs forwarded through `producer` while a second producer with the same transactional id fences it. */
async function fencedMidway(t: TestContext, attempts: number) {
  const { transport, topic: input } = await freshTopic(t, 1);
  const { topic: output } = await freshTopic(t, 1);
  const group = randomName('g');
  const events = [0, 1].map((n) => createEvent({ topic: input, type: 'x', source: '/t', key: `k${n}`, data: { n } }));
  const plain = transport.producer();
  t.after(() => plain.close());
  await plain.send(events.map(encodeEvent));
  const transactionalId = randomName('tx');
  const producer = transport.producer({ transactionalId });
  t.after(() => producer.close());
  await producer.connect();
  const consumer = transport.consumer({ group, topics: [input], maxBatchSize: 100, fromBeginning: true });
  t.after(() => consumer.close());
  const errors: unknown[] = [];
  let fenced = false;
  let forwarded = 0;
  let stuck = false;
  await consumer.run(async (batch, control) => {
    if (stuck) return;
    if (!fenced) {
      // Another instance with the same transactional id starts: its initialisation fences this producer's epoch.
      fenced = true;
      const usurper = transport.producer({ transactionalId });
      await usurper.connect();
      await usurper.close();
    }
    const last = batch.records.at(-1)!;
    const outputs = batch.records.map((record) => ({ ...encodeEvent(decodeEvent(record)), topic: output }));
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        await producer.sendInTransaction!(outputs, [positionAfter(last)], consumer);
        control.resolve(last.offset);
        forwarded += batch.records.length;
        return;
      } catch (error) {
        errors.push(error);
      }
    }
    stuck = true;
  });
  await eventually(async () => forwarded === 2 || stuck, 60_000, 'the batches');
  const admin = transport.admin();
  t.after(() => admin.close());
  return { errors, committed: (await admin.committedOffsets(group, input))[0]?.offset, output, transport };
}

test('a fenced transactional producer is replaced: the retried sendInTransaction commits, once', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { errors, committed, output, transport } = await fencedMidway(t, 3);
  assert.equal(errors.length, 1, `one failure, then a commit: ${errors.map((e) => (e as Error).message).join(' | ')}`);
  assert.equal((errors[0] as { code?: string }).code, 'EFF_TRANSPORT');
  assert.equal((errors[0] as { details?: { replaced?: boolean } }).details?.replaced, true);
  assert.equal(committed, '2');
  const reader = transport.consumer({
    group: randomName('r'),
    topics: [output],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  t.after(() => reader.close());
  let read = 0;
  await reader.run(async (batch, control) => {
    read += batch.records.length;
    control.resolve(batch.records.at(-1)!.offset);
  });
  await eventually(async () => read >= 2, 30_000, 'the output');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal(read, 2, 'the two outputs once each (read_committed)');
});

test('naive twin: a fenced producer kept (its abort failing silently) fails every later transaction', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { transport } = await freshTopic(t, 1);
  const { topic } = await freshTopic(t, 1);
  const transactionalId = randomName('tx');
  const { KafkaJS } = (await import('@confluentinc/kafka-javascript')).default;
  const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: defaultBrokers(), logLevel: KafkaJS.logLevel.NOTHING } });
  const make = () =>
    kafka.producer({ kafkaJS: { idempotent: true, acks: -1, transactionalId, maxInFlightRequests: 1 } });
  const fenced = make();
  await fenced.connect();
  t.after(() => fenced.disconnect().catch(() => undefined));
  const usurper = make();
  await usurper.connect();
  await usurper.disconnect();
  const failures: string[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const transaction = await fenced.transaction();
      try {
        await transaction.send({ topic, messages: [{ value: 'x' }] });
        await transaction.commit();
      } catch (error) {
        await transaction.abort().catch(() => undefined);
        throw error;
      }
    } catch (error) {
      failures.push((error as Error).message);
    }
  }
  void transport;
  assert.equal(failures.length, 2, 'both attempts fail: the producer never recovers on its own');
});
