// A record in retry pauses only its own partition: the other partitions keep flowing while it waits out its backoff.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function healthyPartitionsFlow(db: Db, schema: string, transport: Transport, topic: string) {
  let failing = true;
  let failures = 0;
  const applied: string[] = [];
  const make = (key: string) => createEvent({ topic, type: 'x', source: '/t', key, data: { key } });
  const consumer = createConsumer({
    db,
    transport,
    group: randomName('g'),
    topics: [topic],
    schema,
    logger: silentLogger,
    maxAttempts: 1000,
    retry: { baseMs: 200, capMs: 200 },
    handler: async (event) => {
      const { key } = event.data as { key: string };
      if (key === 'stuck' && failing) {
        failures += 1;
        throw new TransientError('provider down');
      }
      applied.push(key);
    },
  });
  const producer = transport.producer();
  try {
    await consumer.start();
    await producer.send([encodeEvent(make('stuck'))]);
    await eventually(async () => failures >= 1, 30_000, 'the first failure');
    await producer.send(Array.from({ length: 30 }, (_, i) => encodeEvent(make(`key-${i}`))));
    // While `stuck` keeps failing, the keys on the other partitions are applied.
    await eventually(async () => applied.length >= 5, 30_000, 'other partitions to flow during the retries');
    // The stuck record is retried (not dropped, not dead) while the others flow.
    await eventually(async () => failures >= 2, 30_000, 'a second attempt of the stuck record');
    assert.equal(applied.includes('stuck'), false);
    failing = false;
    await eventually(async () => applied.length === 31, 30_000, 'everything once the provider is back');
    assert.equal(new Set(applied).size, 31);
  } finally {
    await consumer.close();
    await producer.close();
  }
}

test('kafka: a partition in backoff is paused alone, the others keep flowing', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 3);
  await healthyPartitionsFlow(db, schema, transport, topic);
});

test('embedded: a partition in backoff is paused alone, the others keep flowing', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'retry_pause';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 3 }]);
  await healthyPartitionsFlow(db, schema, transport, 'orders');
});
