// Registry-backed data end to end on the embedded transport: the outbox writes Avro (v1 writer) through the relay, a
// consumer reading with the evolved v2 schema gets the v1 data resolved (the new field's default), and a record whose
// schema id the registry does not know becomes a typed dead letter while the rest is applied.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { decodeEventWith } from '../../src/schema/serde/envelope.ts';
import { encodeWire } from '../../src/schema/serde/wire.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

const schemaFile = (name: string) =>
  readFileSync(new URL(`../../examples/schemas/order-confirmed/${name}`, import.meta.url), 'utf8');

test('embedded: Avro through outbox and relay, read with an evolved schema; an unknown schema id is a dead letter', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'serde_pipeline';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 2 }]);
  const registry = postgresSchemaRegistry({ db, schema });
  const writer = avroSerde({ registry, schema: schemaFile('v1.avsc') });
  const outbox = createOutbox({ schema, notify: false, serde: writer });
  const order = (n: number) => ({
    orderId: `order-${n}`,
    orderNo: n,
    customerEmail: `c${n}@example.org`,
    total: 1000 + n,
    seats: [`A${n}`],
    confirmedAt: Date.UTC(2026, 11, 2),
  });
  await writer.register('orders'); // at start-up: see nested-transaction.test.ts for the first enqueue without it
  await db.transaction(async (tx) => {
    const events = Array.from({ length: 10 }, (_, n) =>
      createEvent({ topic: 'orders', type: 'OrderConfirmed', source: '/boxoffice', key: `order-${n}`, data: order(n) }),
    );
    await outbox.enqueue(tx, events);
  });
  const producer = transport.producer();
  t.after(() => producer.close());
  const relay = createRelay({ db, producer, schema, listen: false });
  assert.equal(await relay.drain(), 10);
  // A record claiming Avro with a schema id nobody registered.
  const stranger = encodeEvent(
    createEvent({ topic: 'orders', type: 'OrderConfirmed', source: '/x', key: 'k', data: {} }),
  );
  await producer.send([
    {
      ...stranger,
      value: encodeWire(999, Buffer.from([2])),
      headers: { ...stranger.headers, 'content-type': 'application/avro' },
    },
  ]);

  const reader = avroSerde<{ orderId: string; currency: string; couponCode: string | null }>({
    registry,
    schema: schemaFile('v2-currency.avsc'),
  });
  const seen: { orderId: string; currency: string }[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'notifications',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    decode: decodeEventWith(reader),
    handler: async (event) => {
      const data = event.data as { orderId: string; currency: string };
      seen.push({ orderId: data.orderId, currency: data.currency });
    },
  });
  await consumer.start();
  t.after(() => consumer.close());
  const store = deadLetterStore({ schema });
  await eventually(async () => seen.length === 10 && (await store.list(db)).length === 1, 30_000, 'all settled');
  assert.ok(
    seen.every((s) => s.currency === 'BRL'),
    'v1 data read with the v2 schema gets the default',
  );
  const [letter] = await store.list(db);
  assert.equal(letter!.code, 'EFF_SCHEMA_UNKNOWN_ID');
});
