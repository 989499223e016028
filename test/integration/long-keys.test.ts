// A record key longer than a btree index entry allows (~2.7 KB) is an ordinary input: Kafka carries keys up to the
// record's size. Where the library indexes keys (key-ordered holds and parks, refused outbox rows) such a key used to
// fail the insert that records the failure (54000), retried for ever: a stuck partition, a stuck relay shard. Real
// PostgreSQL; the relay case on the real broker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { discardRefused, listRefused } from '../../src/outbox/refused.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

// Random text: a repeated character would compress under the index's limit.
const longKey = `long-${randomBytes(3000).toString('hex')}`;

test('key-ordered: a dead letter with a 6 KB key holds its key; the record parked behind it keeps its key and is applied after the discard', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  const applied: { key: string; v: number }[] = [];
  for (const mode of ['partition', 'key'] as const) {
    applied.length = 0;
    const topic = `orders-${mode}`;
    await transport.admin().createTopics([{ topic, partitions: 1 }]);
    const group = randomName('g');
    const consumer = createConsumer({
      db,
      transport,
      group,
      topics: [topic],
      schema,
      logger: silentLogger,
      keyOrdered: true,
      drainIntervalMs: 100,
      maxAttempts: 1,
      concurrency: { mode },
      handler: async (event) => {
        const { v } = event.data as { v: number };
        if (v === 1 && event.key === longKey) throw new PermanentError('refused by the handler');
      },
      onOutcome: (event, outcome) => {
        if (outcome === 'applied') applied.push({ key: event.key, v: (event.data as { v: number }).v });
      },
    });
    const producer = transport.producer();
    const make = (key: string, v: number) =>
      encodeEvent(createEvent({ topic, type: 'x', source: '/t', key, data: { v } }));
    await producer.send([make(longKey, 1), make('a', 1), make(longKey, 2), make('b', 1)]);
    await producer.close();
    const store = deadLetterStore({ schema });
    await consumer.start();
    try {
      const mine = async () => (await store.list(db)).filter((letter) => letter.consumer === group);
      await eventually(async () => (await mine()).length === 1, 30_000, `${mode}: the dead letter with the long key`);
      await eventually(async () => applied.length >= 2, 30_000, `${mode}: the other keys`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(
        applied.map(({ key }) => key).sort(),
        ['a', 'b'],
        `${mode}: the long key's second record waits behind its dead letter`,
      );
      await store.discard(db, [(await mine())[0]!.id]);
      await eventually(async () => applied.length === 3, 30_000, `${mode}: the parked record after the discard`);
      assert.equal(applied[2]?.key, longKey, 'applied with its own key, byte for byte');
      assert.equal(applied[2]?.v, 2);
    } finally {
      await consumer.close();
    }
  }
});

test('naive twin: the key as the hold stored it before (its base64 form) is refused by the index', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await assert.rejects(
    db.query(`INSERT INTO ${schema}.key_holds (consumer, topic, key, holder_event_id) VALUES ($1, $2, $3, $4)`, [
      'g',
      'orders',
      Buffer.from(longKey).toString('base64'),
      '0190a1b2-0000-7000-8000-000000000001',
    ]),
    { code: '54000' },
  );
});

test('relay: a refused row with a 6 KB key is set aside, the rest flows, and it can be discarded', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 100_000 });
  const event = (key: string, n: number, pad = 0) =>
    createEvent({ topic, type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } });
  const outbox = createOutbox({ schema });
  await db.transaction((tx) =>
    outbox.enqueue(tx, [event(longKey, 1, 300_000), ...Array.from({ length: 20 }, (_, i) => event(`other-${i}`, i))]),
  );
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const relay = createRelay({ db, schema, producerFactory: () => transport.producer(), logger: silentLogger });
  t.after(() => relay.close());
  await relay.start();
  const pending = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
  await eventually(
    async () => (await listRefused(db, { schema })).length === 1,
    30_000,
    'the long-keyed row set aside',
  );
  await eventually(async () => (await pending()) === 0, 30_000, 'the other rows published');
  assert.equal((await listRefused(db, { schema }))[0]?.key, longKey);
  assert.equal(await discardRefused(db, { schema }), 1);
});
