// The transactional outbox and its relay on the real database and broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('events enqueued in a rolled-back transaction never exist; committed ones wait in order', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const outbox = createOutbox({ schema });
  const make = (n: number) => createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n } });
  await assert.rejects(
    db.transaction(async (tx) => {
      await outbox.enqueue(tx, [make(1), make(2)]);
      throw new Error('order failed to save');
    }),
  );
  await db.transaction((tx) => outbox.enqueue(tx, [make(3), make(4), make(5)]));
  const { rows } = await db.query<{ payload: Buffer }>(`SELECT payload FROM ${schema}.outbox ORDER BY seq`);
  assert.deepEqual(
    rows.map((row) => JSON.parse(row.payload.toString()).n),
    [3, 4, 5],
  );
});

test('two relays at once publish everything and keep per-key order', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 3);
  const outbox = createOutbox({ schema });
  const keys = 12;
  const perKey = 25;
  // Writers interleave keys across many small transactions, as concurrent order services would.
  for (let round = 0; round < perKey; round++) {
    await Promise.all(
      Array.from({ length: 3 }, (_, w) =>
        db.transaction((tx) =>
          outbox.enqueue(
            tx,
            Array.from({ length: keys / 3 }, (_, i) =>
              createEvent({ topic, type: 'x', source: '/t', key: `key-${w * 4 + i}`, data: { n: round } }),
            ),
          ),
        ),
      ),
    );
  }
  const relays = [1, 2].map(() =>
    createRelay({ db, producer: transport.producer(), schema, batchSize: 17, logger: silentLogger }),
  );
  for (const relay of relays) t.after(() => relay.close());
  await Promise.all(relays.map((relay) => relay.start()));

  const seen = new Map<string, number[]>();
  const consumer = transport.consumer({
    group: randomName('g'),
    topics: [topic],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  t.after(() => consumer.close());
  await consumer.run(async (batch, control) => {
    for (const record of batch.records) {
      const event = decodeEvent(record);
      seen.set(event.key, [...(seen.get(event.key) ?? []), (event.data as { n: number }).n]);
    }
    control.resolve(batch.records.at(-1)!.offset);
  });
  const total = () => [...seen.values()].reduce((sum, list) => sum + list.length, 0);
  await eventually(async () => total() >= keys * perKey, 60_000, 'every event consumed');
  const expected = Array.from({ length: perKey }, (_, n) => n);
  for (const [key, list] of seen) assert.deepEqual(list, expected, `order of ${key}`);
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`);
  assert.equal(Number(rows[0]?.n), 0);
});
