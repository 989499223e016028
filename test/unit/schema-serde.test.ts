// Serdes against the embedded registry on PGlite: wire format, Avro resolution, JSON Schema validation, subject
// strategies, compatibility on register, and every decode failure as its coded, permanent error.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { decodeEvent, encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError } from '../../src/errors.ts';
import type { SchemaRegistry } from '../../src/schema/registry/port.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { decodeEventWith, encodeEventWith } from '../../src/schema/serde/envelope.ts';
import { jsonSchemaSerde } from '../../src/schema/serde/json.ts';
import { encodeWire } from '../../src/schema/serde/wire.ts';
import type { IncomingRecord, OutgoingRecord } from '../../src/transport/port.ts';

const example = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../examples/schemas/order-confirmed/${file}`, import.meta.url), 'utf8'));
const v1Avro = example('v1.avsc');
const v2Avro = example('v2-currency.avsc');
const v1Json = example('v1.json');
const jsonOrder = {
  orderId: '0190a6f0-0000-7000-8000-000000000001',
  orderNo: 7,
  customerEmail: 'ana@example.com',
  total: 12900,
  seats: ['A1', 'A2'],
  confirmedAt: '2026-12-02T16:00:00.000Z',
};
// the Avro examples keep confirmedAt as a timestamp-millis long
const order = { ...jsonOrder, confirmedAt: Date.parse(jsonOrder.confirmedAt) };

let db: Awaited<ReturnType<typeof pgliteDb>>;
let registry: SchemaRegistry;
before(async () => {
  db = await pgliteDb();
  await migrate(db);
  registry = postgresSchemaRegistry({ db });
});
after(() => db.close());

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<EffectivelyError> {
  const error = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof EffectivelyError, String(error));
  assert.equal(error.code, code, error.message);
  return error;
}

const incoming = (record: OutgoingRecord, offset = '0'): IncomingRecord => ({
  topic: record.topic,
  partition: 0,
  offset,
  key: record.key === null || record.key === undefined ? null : Buffer.from(record.key),
  value: record.value === null ? null : Buffer.from(record.value),
  headers: Object.fromEntries(Object.entries(record.headers ?? {}).map(([k, v]) => [k, Buffer.from(v)])),
  timestamp: Date.now(),
});

test('avro: wire format (magic 0, big-endian id, payload), round trip, the same schema keeps its id', async () => {
  const serde = avroSerde<object>({ registry, schema: v1Avro });
  const bytes = await serde.serialize('orders-a', order);
  assert.equal(bytes[0], 0);
  const id = bytes.readInt32BE(1);
  assert.equal((await registry.getLatest('orders-a-value')).id, id);
  assert.deepEqual({ ...(await serde.deserialize('orders-a', bytes)) }, order);
  // the same schema, keys in another order and as text: the same id, no new version
  const reordered = JSON.stringify(Object.fromEntries(Object.entries(v1Avro).reverse()), null, 2);
  assert.equal(await registry.register('orders-a-value', reordered, 'avro'), id);
  assert.deepEqual(await registry.versions('orders-a-value'), [1]);
  // ids are global: the same schema under another subject has the same id
  assert.equal(await registry.register('elsewhere-value', v1Avro, 'avro'), id);
});

test('avro: v1 data is read by a v2 reader (defaults filled), v2 data by a v1 reader (new fields skipped)', async () => {
  const v1 = avroSerde<object>({ registry, schema: v1Avro });
  const v2 = avroSerde<object>({ registry, schema: v2Avro });
  const old = await v1.serialize('orders-b', order);
  const next = await v2.serialize('orders-b', { ...order, currency: 'EUR', couponCode: 'X' });
  assert.notEqual(old.readInt32BE(1), next.readInt32BE(1));
  assert.deepEqual(await registry.versions('orders-b-value'), [1, 2]);
  assert.deepEqual({ ...(await v2.deserialize('orders-b', old)) }, { ...order, currency: 'BRL', couponCode: null });
  assert.deepEqual({ ...(await v1.deserialize('orders-b', next)) }, order);
});

test('register refuses an incompatible version (409-like) with the violations; NONE lets it through', async () => {
  await registry.register('orders-c-value', v1Avro, 'avro');
  const totalString = example('v2-total-string.avsc');
  const error = await rejectsWith(registry.register('orders-c-value', totalString, 'avro'), 'EFF_SCHEMA_INCOMPATIBLE');
  assert.equal(error.retryable, false);
  assert.equal(error.details.level, 'BACKWARD');
  assert.match(error.message, /total/);
  assert.ok((error.details.violations as unknown[]).length > 0);
  assert.deepEqual(await registry.versions('orders-c-value'), [1]);
  assert.equal(await registry.getCompatibility('orders-c-value'), 'BACKWARD');
  await registry.setCompatibility('orders-c-value', 'NONE');
  assert.equal(await registry.getCompatibility('orders-c-value'), 'NONE');
  assert.equal(await registry.getCompatibility(null), 'BACKWARD');
  await registry.register('orders-c-value', totalString, 'avro');
  assert.equal((await registry.getLatest('orders-c-value')).version, 2);
  // a v1 reader cannot resolve the string `total`: permanent, its own code
  const bytes = await avroSerde({ registry, schema: totalString, subject: () => 'orders-c-value' }).serialize('x', {
    ...order,
    total: '129.00',
  });
  await rejectsWith(
    avroSerde<object>({ registry, schema: v1Avro }).deserialize('orders-c', bytes),
    'EFF_SCHEMA_INCOMPATIBLE',
  );
});

test('decode failures: not the wire format, unknown id, truncated payload, value not matching on write', async () => {
  const serde = avroSerde<object>({ registry, schema: v1Avro });
  const good = await serde.serialize('orders-d', order);
  const notWire = await rejectsWith(serde.deserialize('orders-d', Buffer.from('{"a":1}')), 'EFF_SCHEMA_DECODE_FAILED');
  assert.equal(notWire.details.topic, 'orders-d');
  const unknown = await rejectsWith(
    serde.deserialize('orders-d', encodeWire(987654, good.subarray(5))),
    'EFF_SCHEMA_UNKNOWN_ID',
  );
  assert.equal(unknown.retryable, false);
  assert.equal(unknown.details.schemaId, 987654);
  await rejectsWith(serde.deserialize('orders-d', good.subarray(0, good.length - 3)), 'EFF_SCHEMA_DECODE_FAILED');
  await rejectsWith(serde.serialize('orders-d', { ...order, total: 'lots' }), 'EFF_SCHEMA_ENCODE_FAILED');
  await rejectsWith(registry.getVersion('orders-d-value', 9), 'EFF_SCHEMA_NOT_FOUND');
});

test('json schema: validated on write and read; writer-valid data the reader refuses is incompatible', async () => {
  const serde = jsonSchemaSerde({ registry, schema: v1Json });
  const bytes = await serde.serialize('orders-j', jsonOrder);
  assert.equal(JSON.parse(bytes.subarray(5).toString('utf8')).orderNo, 7);
  assert.deepEqual(await serde.deserialize('orders-j', bytes), jsonOrder);
  const encode = await rejectsWith(
    serde.serialize('orders-j', { ...jsonOrder, orderNo: 0 }),
    'EFF_SCHEMA_ENCODE_FAILED',
  );
  assert.match(encode.message, /orderNo/);
  const notJson = encodeWire(bytes.readInt32BE(1), Buffer.from([0xff, 0xfe]));
  await rejectsWith(serde.deserialize('orders-j', notJson), 'EFF_SCHEMA_DECODE_FAILED');
  // a stricter reader (orderNo at most 5) reads data its writer's schema allowed: refused as incompatible
  const strict = { ...v1Json, properties: { ...v1Json.properties, orderNo: { type: 'integer', maximum: 5 } } };
  await rejectsWith(
    jsonSchemaSerde({ registry, schema: strict }).deserialize('orders-j', bytes),
    'EFF_SCHEMA_INCOMPATIBLE',
  );
  // a closed v1 reader refuses a property v1 did not know (registered under NONE elsewhere)
  await registry.setCompatibility('orders-j2-value', 'NONE');
  const open = { ...v1Json, additionalProperties: true };
  const extra = await jsonSchemaSerde({ registry, schema: open }).serialize('orders-j2', { ...jsonOrder, note: 'x' });
  await rejectsWith(serde.deserialize('orders-j2', extra), 'EFF_SCHEMA_INCOMPATIBLE');
});

test('subject strategies: record name and topic-record name; autoRegister off needs the schema registered', async () => {
  const byRecord = avroSerde({ registry, schema: v1Avro, subject: 'record' });
  assert.equal(byRecord.subjectFor('any-topic'), 'boxoffice.orders.OrderConfirmed');
  await byRecord.serialize('any-topic', order);
  assert.ok((await registry.subjects()).includes('boxoffice.orders.OrderConfirmed'));
  assert.equal(
    jsonSchemaSerde({ registry, schema: v1Json, subject: 'topic-record' }).subjectFor('t'),
    't-OrderConfirmed',
  );
  const fixed = avroSerde({ registry, schema: v1Avro, autoRegister: false });
  await rejectsWith(fixed.serialize('never-registered', order), 'EFF_SCHEMA_NOT_FOUND');
  await registry.register('never-registered-value', v1Avro, 'avro');
  assert.equal((await fixed.serialize('never-registered', order))[0], 0);
});

test('envelope: binary-mode event with avro data, dataschema and content type; JSON events still decode', async () => {
  const serde = avroSerde<object>({ registry, schema: v1Avro });
  const event = createEvent({
    topic: 'orders-e',
    type: 'OrderConfirmed',
    source: '/boxoffice',
    key: 'o-1',
    data: order,
  });
  const record = await encodeEventWith(serde)(event);
  const id = Buffer.from(record.value!).readInt32BE(1);
  assert.equal(record.headers?.['content-type'], 'application/avro');
  assert.equal(record.headers?.ce_dataschema, `registry:schemas/ids/${id}`);
  assert.equal(record.headers?.ce_id, event.id);
  const decode = decodeEventWith(serde);
  const back = await decode(incoming(record));
  assert.deepEqual({ ...back, data: { ...(back.data as object) } }, { ...event, headers: {} });
  // a JSON event from before the serde: decoded as decodeEvent does
  const json = incoming(encodeEvent(event));
  assert.deepEqual(await decode(json), decodeEvent(json));
  // an unknown schema id: the typed, permanent error naming the record
  const stray = incoming({ ...record, value: encodeWire(424242, Buffer.from(record.value!).subarray(5)) }, '17');
  const error = await rejectsWith(decode(stray), 'EFF_SCHEMA_UNKNOWN_ID');
  assert.equal(error.retryable, false);
  assert.deepEqual([error.details.offset, error.details.eventId], ['17', event.id]);
  assert.match(error.message, /^orders-e\[0\]@17: /);
});
