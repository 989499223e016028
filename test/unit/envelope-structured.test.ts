// CloudEvents structured mode: round trips, the same Event as the binary mode, serde-given datacontenttype and
// dataschema, per-topic modes, typed errors for bad input, and a consumer that reads both modes in one topic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import {
  dataContentTypeOf,
  decodeEvent,
  encodeEvent,
  encodeEventAs,
  eventIdOfRecord,
  modeFor,
} from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { encodeStructured, structuredContentType } from '../../src/envelope/structured.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { IncomingRecord, OutgoingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

function asIncoming(record: OutgoingRecord, offset = '7'): IncomingRecord {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(record.headers)) headers[name] = Buffer.from(value);
  return {
    topic: record.topic,
    partition: 0,
    offset,
    key: record.key === null ? null : Buffer.from(record.key),
    value: record.value,
    headers,
    timestamp: Date.now(),
  };
}

const order = (data: unknown = { total: 120, seats: ['A1', 'A2'] }): Event =>
  createEvent({
    topic: 'orders',
    type: 'boxoffice.order.confirmed',
    source: '/boxoffice/orders',
    key: 'order-1',
    version: 3,
    data,
    headers: { traceparent: '00-abc-def-01', ce_subject: 'order-1' },
  });

const documentOf = (record: OutgoingRecord) => JSON.parse(record.value!.toString('utf8')) as Record<string, unknown>;

test('structured mode: the whole event is JSON in the value and decodes to the same Event as binary mode', () => {
  const event = order();
  const record = encodeStructured(event);
  assert.deepEqual(record.headers, { 'content-type': structuredContentType, traceparent: '00-abc-def-01' });
  assert.equal(record.key, 'order-1');
  assert.deepEqual(documentOf(record), {
    specversion: '1.0',
    id: event.id,
    source: '/boxoffice/orders',
    type: 'boxoffice.order.confirmed',
    time: event.time,
    subject: 'order-1',
    partitionkey: 'order-1',
    version: 3,
    datacontenttype: 'application/json',
    data: { total: 120, seats: ['A1', 'A2'] },
  });
  const structured = decodeEvent(asIncoming(record));
  assert.deepEqual(structured, event);
  assert.deepEqual(structured, decodeEvent(asIncoming(encodeEvent(event))));
  // The key comes from `partitionkey` when the record has none, as `ce_partitionkey` does in binary mode.
  assert.equal(decodeEvent({ ...asIncoming(record), key: null }).key, 'order-1');
});

test('encodeEventAs: binary is encodeEvent byte for byte; structured as encodeStructured', () => {
  const event = order();
  assert.deepEqual(encodeEventAs(event, 'binary'), encodeEvent(event));
  assert.deepEqual(encodeEventAs(event, 'structured'), encodeStructured(event));
});

test('datacontenttype and dataschema come from the serde, in both modes', () => {
  const event = order({ ignored: true });
  const bytes = Buffer.from([0x02, 0x08, 0xf0, 0x01]);
  const avro = { contentType: 'application/avro', dataSchema: 'urn:schema:order-confirmed:2', bytes };
  const structured = encodeEventAs(event, 'structured', avro);
  const document = documentOf(structured);
  assert.equal(document.datacontenttype, 'application/avro');
  assert.equal(document.dataschema, 'urn:schema:order-confirmed:2');
  assert.equal(document.data_base64, bytes.toString('base64'));
  assert.equal('data' in document, false);
  const decoded = decodeEvent(asIncoming(structured));
  assert.deepEqual(decoded.data, bytes);
  assert.equal(decoded.headers?.ce_dataschema, 'urn:schema:order-confirmed:2');

  const binary = encodeEventAs(event, 'binary', avro);
  assert.equal(binary.headers['content-type'], 'application/avro');
  assert.equal(binary.headers.ce_dataschema, 'urn:schema:order-confirmed:2');
  assert.deepEqual(binary.value, bytes);

  // JSON bytes from a JSON serde are embedded as a JSON value, not base64.
  const json = { contentType: 'application/json', dataSchema: 'urn:schema:order-confirmed:1' };
  const embedded = documentOf(encodeEventAs(event, 'structured', { ...json, bytes: Buffer.from('{"total":5}') }));
  assert.deepEqual(embedded.data, { total: 5 });
  assert.equal(embedded.dataschema, 'urn:schema:order-confirmed:1');
  // Bytes of a JSON content type that are not plain JSON (a registry's wire format: magic byte, schema id) travel as
  // data_base64, and the content type tells a serde the record is its own, in either mode.
  const wire = Buffer.concat([Buffer.from([0, 0, 0, 0, 7]), Buffer.from('{"total":5}')]);
  const registry = { contentType: 'application/schema+json', dataSchema: 'registry:schemas/ids/7', bytes: wire };
  const framed = encodeEventAs(event, 'structured', registry);
  assert.equal(documentOf(framed).data_base64, wire.toString('base64'));
  assert.deepEqual(decodeEvent(asIncoming(framed)).data, wire);
  assert.equal(dataContentTypeOf(asIncoming(framed)), 'application/schema+json');
  assert.equal(dataContentTypeOf(asIncoming(encodeEventAs(event, 'binary', registry))), 'application/schema+json');
  assert.equal(dataContentTypeOf(asIncoming(encodeStructured(event))), 'application/json');
  assert.equal(dataContentTypeOf(asIncoming(encodeEvent(event))), 'application/json');
  // Raw bytes as the event's data travel as data_base64 and come back as bytes.
  const raw = decodeEvent(asIncoming(encodeStructured(order(Buffer.from('hello')))));
  assert.deepEqual(raw.data, Buffer.from('hello'));
  // A content type that is not JSON needs the bytes (an object cannot be written as application/avro).
  assert.throws(() => encodeEventAs(event, 'structured', { contentType: 'application/avro' }), {
    code: 'EFF_INVALID_EVENT',
  });
});

test('the content mode is chosen per topic: a map or a function, binary by default', () => {
  assert.equal(modeFor(undefined, 'orders'), 'binary');
  assert.equal(modeFor({ 'order-events.v2': 'structured' }, 'order-events.v2'), 'structured');
  assert.equal(modeFor({ 'order-events.v2': 'structured' }, 'order-events'), 'binary');
  assert.equal(
    modeFor((topic) => (topic.endsWith('.v2') ? 'structured' : 'binary'), 'x.v2'),
    'structured',
  );
  assert.throws(() => modeFor({ orders: 'structed' as never }, 'orders'), { code: 'EFF_INVALID_OPTIONS' });
});

test('content-type parameters and case do not matter; eventIdOfRecord reads both modes', () => {
  const event = order();
  const record = asIncoming(encodeStructured(event));
  record.headers['content-type'] = Buffer.from('Application/CloudEvents+JSON; charset=utf-8');
  assert.equal(decodeEvent(record).id, event.id);
  assert.equal(eventIdOfRecord(record), event.id);
  assert.equal(eventIdOfRecord(asIncoming(encodeEvent(event))), event.id);
  assert.equal(eventIdOfRecord({ ...record, value: Buffer.from('{"id":') }), null);
  assert.equal(eventIdOfRecord({ ...record, value: Buffer.from('{"id":""}') }), null);
});

test('bad structured records fail with the same stable codes as binary mode, never a crash', () => {
  const event = order();
  const good = asIncoming(encodeStructured(event));
  const document = documentOf(encodeStructured(event));
  const withDocument = (change: Record<string, unknown>, drop: string[] = []) => {
    const next: Record<string, unknown> = { ...document, ...change };
    for (const name of drop) delete next[name];
    return { ...good, value: Buffer.from(JSON.stringify(next)) };
  };
  const cases: [string, IncomingRecord, string][] = [
    ['malformed JSON', { ...good, value: Buffer.from('{"id":') }, 'EFF_DECODE_FAILED'],
    ['invalid UTF-8', { ...good, value: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }, 'EFF_DECODE_FAILED'],
    ['no value', { ...good, value: null }, 'EFF_DECODE_FAILED'],
    ['not an object', { ...good, value: Buffer.from('[1,2]') }, 'EFF_DECODE_FAILED'],
    [
      'batch format',
      { ...good, headers: { ...good.headers, 'content-type': Buffer.from('application/cloudevents-batch+json') } },
      'EFF_DECODE_FAILED',
    ],
    ['no id', withDocument({}, ['id']), 'EFF_MISSING_EVENT_ID'],
    ['empty id', withDocument({ id: '' }), 'EFF_MISSING_EVENT_ID'],
    ['id not a string', withDocument({ id: 42 }), 'EFF_MISSING_EVENT_ID'],
    ['no type', withDocument({}, ['type']), 'EFF_INVALID_EVENT'],
    ['empty source', withDocument({ source: '' }), 'EFF_INVALID_EVENT'],
    ['other specversion', withDocument({ specversion: '0.3' }), 'EFF_INVALID_EVENT'],
    ['bad version', withDocument({ version: 'v2' }), 'EFF_INVALID_EVENT'],
    ['fractional version', withDocument({ version: 1.5 }), 'EFF_INVALID_EVENT'],
    ['time not a string', withDocument({ time: 5 }), 'EFF_INVALID_EVENT'],
    ['data and data_base64', withDocument({ data_base64: 'AA==' }), 'EFF_INVALID_EVENT'],
    ['bad base64', withDocument({ data_base64: '@@' }, ['data']), 'EFF_INVALID_EVENT'],
    ['object attribute', withDocument({ subject: { a: 1 } }), 'EFF_INVALID_EVENT'],
  ];
  for (const [name, record, code] of cases) {
    assert.throws(
      () => decodeEvent(record),
      (error: unknown) => error instanceof EffectivelyError && error.code === code && !error.retryable,
      name,
    );
  }
  // A version written as an integer string (as the binary header is) is accepted.
  assert.equal(decodeEvent(withDocument({ version: '4' })).version, 4);
});

test('embedded: one consumer reads binary and structured records of one topic; a bad one is a typed dead letter', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'modes';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const make = (n: number) => createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } });
  const events = [1, 2, 3, 4].map(make);
  const bad = { ...encodeStructured(make(99)), value: Buffer.from('{"specversion":"1.0",') };
  const producer = transport.producer();
  await producer.send([
    encodeEventAs(events[0]!, 'binary'),
    encodeEventAs(events[1]!, 'structured'),
    bad,
    encodeEventAs(events[2]!, 'structured'),
    encodeEventAs(events[3]!, 'binary'),
  ]);
  await producer.close();
  const applied: number[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'reader',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    handler: async (event) => {
      applied.push((event.data as { n: number }).n);
    },
  });
  try {
    await consumer.start();
    await eventually(async () => applied.length === 4, 30_000, 'both modes applied');
    assert.deepEqual(applied, [1, 2, 3, 4]);
    const letters = await deadLetterStore({ schema }).list(db);
    assert.deepEqual(
      letters.map((letter) => [letter.offset, letter.code]),
      [['2', 'EFF_DECODE_FAILED']],
    );
  } finally {
    await consumer.close();
  }
});
