// Kafka→Kafka: output records and the input offsets commit in one Kafka transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEvent, encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
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
