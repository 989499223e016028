// Consumer lag (end offsets − committed offsets per partition) on the embedded transport: everything written counts
// before the group's first commit, nothing once it caught up, and what arrives while the consumer is paused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consumerLag } from '../../src/backpressure/lag.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

test('embedded: lag is end − committed per partition, grows while the consumer is paused, and drains', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'lag';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  const admin = transport.admin();
  await admin.createTopics([{ topic: 'orders', partitions: 3 }]);
  const producer = transport.producer();
  t.after(() => producer.close());
  const publish = (from: number, count: number) =>
    producer.send(
      Array.from({ length: count }, (_, i) =>
        encodeEvent(
          createEvent({ topic: 'orders', type: 'OrderPlaced', source: '/shop', key: `o-${from + i}`, data: {} }),
        ),
      ),
    );
  await publish(0, 30);

  const before = await consumerLag(transport, 'notifications', ['orders']);
  assert.equal(before.total, 30, 'nothing committed: everything written is lag');
  assert.equal(before.partitions.length, 3);
  for (const p of before.partitions) {
    assert.equal(p.committed, '-1');
    assert.equal(p.lag, Number(p.end));
  }

  let applied = 0;
  const consumer = createConsumer({
    db,
    transport,
    group: 'notifications',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    handler: async () => {
      applied += 1;
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  // An open Admin works as the source too (kept open: for polling).
  await eventually(async () => (await consumerLag(admin, 'notifications', ['orders'])).total === 0, 30_000, 'lag 0');
  assert.equal(applied, 30);

  consumer.pause();
  await publish(30, 12);
  const paused = await consumerLag(transport, 'notifications', ['orders']);
  assert.equal(paused.total, 12, 'what arrived while paused');
  assert.equal(
    paused.partitions.reduce((sum, p) => sum + (Number(p.end) - Number(p.committed)), 0),
    12,
  );
  consumer.resume();
  await eventually(
    async () => (await consumerLag(transport, 'notifications', ['orders'])).total === 0,
    30_000,
    'drained',
  );
  assert.equal(applied, 42);
});
