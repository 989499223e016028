// Structured mode with a serde (issue 38, hole 1): the outbox writes the registry's wire format as the structured
// event's `data_base64` under `datacontenttype: application/avro` (or `application/schema+json`). Through the relay
// and the embedded log, on PGlite and on the PostgreSQL server, `decodeEventWith(serde)` must read that data through
// the serde, and data the serde cannot read (another serde's bytes, a JSON value claiming the serde's content type)
// must be a dead letter, never a handler call. The naive twin is the reader before the fix: it looked only at the
// Kafka `content-type` header (`application/cloudevents+json`), fell back to the plain decoder and handed the handler
// the wire bytes, with no dead letter.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { decodeEvent, encodeEventAs } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { decodeEventWith } from '../../src/schema/serde/envelope.ts';
import { jsonSchemaSerde } from '../../src/schema/serde/json.ts';
import type { Serde } from '../../src/schema/serde/serde.ts';
import { encodeWire } from '../../src/schema/serde/wire.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eitherDb } from '../support/either-db.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const database = eitherDb();

const schemaFile = (name: string) =>
  readFileSync(new URL(`../../examples/schemas/order-confirmed/${name}`, import.meta.url), 'utf8');

type Where = 'pglite' | 'server';
type Kind = 'avro' | 'json';

/** An order as each example schema has it (the JSON Schema wants a UUID order id and an ISO time). */
const order = (kind: Kind, n: number) => ({
  orderId: kind === 'avro' ? `order-${n}` : `00000000-0000-4000-8000-00000000000${n}`,
  orderNo: n,
  customerEmail: `c${n}@example.org`,
  total: 1000 + n,
  seats: [`A${n}`],
  confirmedAt: kind === 'avro' ? Date.UTC(2026, 11, 2) : '2026-12-02T00:00:00Z',
});

/** The reader before the fix: only the Kafka `content-type` header said whether the data was the serde's. */
const headerOnlyDecoder =
  (serde: Serde) =>
  async (record: IncomingRecord): Promise<Event> => {
    if (record.headers['content-type']?.toString('utf8') !== serde.contentType) return decodeEvent(record);
    return { ...decodeEvent({ ...record, value: null }), data: await serde.deserialize(record.topic, record.value!) };
  };

/** Outbox (structured, with a serde) → relay → embedded log → consumer; returns what the handler and the DLQ got. */
async function run(t: TestContext, where: Where, kind: Kind, naive: boolean) {
  const { db, schema } = await database(t, where);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const registry = postgresSchemaRegistry({ db, schema });
  const make = (k: Kind) =>
    k === 'avro'
      ? avroSerde({ registry, schema: schemaFile('v1.avsc') })
      : jsonSchemaSerde({ registry, schema: schemaFile('v1.json') });
  const serde = make(kind);
  const other = make(kind === 'avro' ? 'json' : 'avro');
  await serde.register('orders');
  const outbox = createOutbox({ schema, notify: false, serde, modes: { orders: 'structured' } });
  const events = [1, 2, 3].map((n) =>
    createEvent({ topic: 'orders', type: 'OrderConfirmed', source: '/boxoffice', key: `o-${n}`, data: order(kind, n) }),
  );
  await db.transaction((tx) => outbox.enqueue(tx, events));
  const producer = transport.producer();
  t.after(() => producer.close());
  assert.equal(await createRelay({ db, producer, schema, listen: false }).drain(), 3);
  // Two structured records the serde cannot read: another serde's wire bytes, and a JSON value claiming its type.
  const foreign = createEvent({
    topic: 'orders',
    type: 'OrderConfirmed',
    source: '/x',
    key: 'f',
    data: order(kind, 8),
  });
  const otherBytes = await other.serialize('orders-other', order(kind === 'avro' ? 'json' : 'avro', 8));
  const claimed = createEvent({
    topic: 'orders',
    type: 'OrderConfirmed',
    source: '/x',
    key: 'c',
    data: order(kind, 9),
  });
  await producer.send([
    encodeEventAs(foreign, 'structured', { contentType: other.contentType, bytes: otherBytes }),
    encodeEventAs(claimed, 'structured', { contentType: serde.contentType, bytes: encodeWire(1, Buffer.from('{}')) }),
  ]);
  // And a JSON value (`data`, not `data_base64`) claiming the serde's content type.
  const asJson = createEvent({ topic: 'orders', type: 'OrderConfirmed', source: '/x', key: 'j', data: order(kind, 7) });
  const json = encodeEventAs(asJson, 'structured');
  const document = JSON.parse(json.value!.toString());
  document.datacontenttype = serde.contentType;
  await producer.send([{ ...json, value: Buffer.from(JSON.stringify(document)) }]);
  const handled: unknown[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'reader',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    decode: naive ? headerOnlyDecoder(serde) : decodeEventWith(serde),
    handler: async (event) => {
      handled.push(event.data);
    },
  });
  await consumer.start();
  t.after(() => consumer.close());
  const store = deadLetterStore({ schema });
  await eventually(
    async () => handled.length + (await store.list(db)).length === 6,
    20_000,
    'every record applied or dead-lettered',
  );
  return { handled, letters: await store.list(db) };
}

for (const where of ['pglite', 'server'] as const) {
  for (const kind of ['avro', 'json'] as const) {
    test(`${where}, ${kind}: structured events with a serde reach the handler read through it; data it cannot read is a dead letter`, async (t) => {
      if (where === 'server' && !(await needs(t, 'postgres'))) return;
      const { handled, letters } = await run(t, where, kind, false);
      assert.deepEqual(
        handled.map((data) => ({ ...(data as object) })),
        [1, 2, 3].map((n) => order(kind, n)),
        'the handler got the data the outbox wrote, read through the serde',
      );
      assert.deepEqual(
        letters.map((letter) => letter.code),
        letters.map(() => 'EFF_SCHEMA_DECODE_FAILED'),
      );
      assert.equal(letters.length, 3);
    });

    if (kind === 'json') continue; // the twin's fault is the same for both serdes: shown once per database
    test(`naive twin, ${where}, ${kind}: reading by the Kafka content-type header alone hands the handler wire bytes, with no dead letter`, async (t) => {
      if (where === 'server' && !(await needs(t, 'postgres'))) return;
      const { handled, letters } = await run(t, where, kind, true);
      assert.equal(letters.length, 0, 'nothing was dead-lettered');
      const bytes = handled.filter((data) => Buffer.isBuffer(data));
      assert.ok(bytes.length >= 3, `the handler got wire bytes as data (${bytes.length} times)`);
      assert.equal((bytes[0] as Buffer)[0], 0, 'magic byte, then the schema id: the registry wire format');
    });
  }
}
