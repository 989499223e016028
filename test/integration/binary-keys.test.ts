// Keys are bytes on the wire: a key that is not text (here with a NUL byte, which PostgreSQL text cannot hold) still
// holds its key in key-ordered mode, is kept as a dead letter with its exact bytes, and is redriven with them, so it
// lands on its original partition and is applied before the record parked behind it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('kafka: a binary key (with a NUL byte) holds its key, is dead-lettered with its bytes and redriven to its partition', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 4);
  const key = Buffer.from([0x00, 0x01, 0xfe, 0xff, 0x2a]);
  const make = (step: string) => {
    const record = encodeEvent(createEvent({ topic, type: 'x', source: '/t', key: 'ignored', data: { step } }));
    return { ...record, key };
  };
  let fixed = false;
  const applied: { step: string; partition: number }[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: randomName('g'),
    topics: [topic],
    schema,
    logger: silentLogger,
    keyOrdered: true,
    drainIntervalMs: 200,
    handler: async (event, { record }) => {
      const { step } = event.data as { step: string };
      if (step === 'first' && !fixed) throw new PermanentError('not yet');
      applied.push({ step, partition: record.partition });
    },
  });
  const producer = transport.producer();
  t.after(async () => {
    await consumer.close();
    await producer.close();
  });
  await consumer.start();
  await producer.send([make('first'), make('second')]);
  const store = deadLetterStore({ schema });
  await eventually(async () => (await store.list(db)).length === 1, 30_000, 'the dead letter');
  const [letter] = await store.list(db);
  assert.equal(letter!.key, null, 'not text');
  assert.deepEqual(letter!.keyBytes, key, 'the exact bytes kept');
  assert.equal(applied.length, 0, 'the second record waits behind the first');
  fixed = true;
  await store.redrive(db, producer);
  await eventually(async () => applied.length === 2, 30_000, 'both applied');
  assert.deepEqual(
    applied.map((a) => a.step),
    ['first', 'second'],
  );
  assert.equal(applied[0]!.partition, letter!.partition, 'redriven to the partition it came from');
});
