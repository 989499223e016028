// The registry contract, run on the embedded registry (PostgreSQL server) and through the HTTP client against the
// embedded registry served over the Confluent API subset (no Confluent-compatible server can be fetched here: see
// docs/schema-evolution.md, "Registry server"); then events with Avro data through a real transport.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { httpSchemaRegistry } from '../../src/schema/registry/http.ts';
import { serveSchemaRegistry } from '../../src/schema/registry/http-server.ts';
import type { SchemaRegistry } from '../../src/schema/registry/port.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { decodeEventWith, encodeEventWith } from '../../src/schema/serde/envelope.ts';
import { encodeWire } from '../../src/schema/serde/wire.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

const example = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../examples/schemas/order-confirmed/${file}`, import.meta.url), 'utf8'));
const order = {
  orderId: '0190a6f0-0000-7000-8000-000000000001',
  orderNo: 7,
  customerEmail: 'ana@example.com',
  total: 12900,
  seats: ['A1'],
  confirmedAt: Date.parse('2026-12-02T16:00:00Z'),
};

async function code(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof EffectivelyError, `expected an EffectivelyError, got ${String(error)}`);
  return error.code;
}

/** What every registry must do, whatever is behind it. */
async function contract(registry: SchemaRegistry): Promise<void> {
  const subject = randomName('orders');
  const json = randomName('json');
  assert.deepEqual(await registry.versions(subject), []);
  assert.equal(await code(registry.getLatest(subject)), 'EFF_SCHEMA_NOT_FOUND');
  const v1 = await registry.register(subject, example('v1.avsc'), 'avro');
  assert.equal(await registry.register(subject, JSON.stringify(example('v1.avsc')), 'avro'), v1);
  const v2 = await registry.register(subject, example('v2-currency.avsc'), 'avro');
  assert.notEqual(v2, v1);
  assert.deepEqual(await registry.versions(subject), [1, 2]);
  const latest = await registry.getLatest(subject);
  assert.deepEqual([latest.subject, latest.version, latest.id, latest.format], [subject, 2, v2, 'avro']);
  assert.equal((await registry.getVersion(subject, 1)).id, v1);
  assert.equal(JSON.parse((await registry.getById(v1)).schema).name, 'OrderConfirmed');
  assert.equal((await registry.lookup(subject, example('v1.avsc'), 'avro'))?.version, 1);
  assert.equal(await registry.lookup(subject, example('v2-total-cents.avsc'), 'avro'), undefined);
  assert.equal(await code(registry.getById(2_000_000_000)), 'EFF_SCHEMA_UNKNOWN_ID');
  assert.equal(await code(registry.getVersion(subject, 7)), 'EFF_SCHEMA_NOT_FOUND');
  // compatibility per subject over the global default
  assert.equal(await registry.getCompatibility(subject), 'BACKWARD');
  assert.equal(
    await code(registry.register(subject, example('v2-total-string.avsc'), 'avro')),
    'EFF_SCHEMA_INCOMPATIBLE',
  );
  await registry.setCompatibility(subject, 'FULL_TRANSITIVE');
  assert.equal(await registry.getCompatibility(subject), 'FULL_TRANSITIVE');
  assert.equal(
    await code(registry.register(subject, example('v2-total-cents.avsc'), 'avro')),
    'EFF_SCHEMA_INCOMPATIBLE',
  );
  // JSON Schema: the closed v1 refuses v2's new properties FORWARD, so FULL refuses and BACKWARD accepts
  await registry.register(json, example('v1.json'), 'json');
  await registry.setCompatibility(json, 'FULL');
  assert.equal(await code(registry.register(json, example('v2-currency.json'), 'json')), 'EFF_SCHEMA_INCOMPATIBLE');
  await registry.setCompatibility(json, 'BACKWARD');
  const jsonV2 = await registry.register(json, example('v2-currency.json'), 'json');
  assert.equal((await registry.getById(jsonV2)).format, 'json');
  assert.ok((await registry.subjects()).includes(json));
  assert.equal(await code(registry.register(json, '{not json', 'json')), 'EFF_SCHEMA_INVALID');
}

async function embedded(t: TestContext): Promise<{ registry: SchemaRegistry; schema: string }> {
  const { db, schema } = await freshSchema(t);
  return { registry: postgresSchemaRegistry({ db, schema }), schema };
}

test('embedded registry (PostgreSQL): register, look up, versions, compatibility', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  await contract((await embedded(t)).registry);
});

test('HTTP client against the embedded registry served over the Confluent API subset', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const server = await serveSchemaRegistry((await embedded(t)).registry);
  t.after(() => server.close());
  const client = httpSchemaRegistry({ url: server.url, cache: false });
  await contract(client);
  // the raw API answers as a Confluent registry does
  const response = await fetch(`${server.url}/schemas/ids/123456`);
  assert.equal(response.status, 404);
  assert.equal(((await response.json()) as { error_code: number }).error_code, 40403);
  const down = httpSchemaRegistry({ url: 'http://127.0.0.1:9', timeoutMs: 2000 });
  const error = await down.getById(1).then(
    () => undefined,
    (e: unknown) => e as EffectivelyError,
  );
  assert.equal(error?.code, 'EFF_SCHEMA_REGISTRY_UNAVAILABLE');
  assert.equal(error?.retryable, true);
});

test('events with Avro data through the embedded transport: produce, read raw, decode; unknown id is typed', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const registry = postgresSchemaRegistry({ db, schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  const topic = 'orders';
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  await roundTrip(transport, topic, registry);
});

test('events with Avro data through Kafka, registry over HTTP: produce, read raw, decode; unknown id is typed', async (t) => {
  if (!(await needs(t, 'postgres', 'kafka'))) return;
  const server = await serveSchemaRegistry((await embedded(t)).registry);
  t.after(() => server.close());
  const { transport, topic } = await freshTopic(t, 1);
  await roundTrip(transport, topic, httpSchemaRegistry({ url: server.url }));
});

async function roundTrip(
  transport: Parameters<typeof readTopic>[0],
  topic: string,
  registry: SchemaRegistry,
): Promise<void> {
  const serde = avroSerde({ registry, schema: example('v1.avsc') });
  const events = [1, 2].map((n) =>
    createEvent({ topic, type: 'OrderConfirmed', source: '/boxoffice', key: `o-${n}`, data: { ...order, orderNo: n } }),
  );
  const records = await Promise.all(events.map(encodeEventWith(serde)));
  const stray = { ...records[1]!, value: encodeWire(1_999_999_999, records[1]!.value!.subarray(5)) };
  const producer = transport.producer();
  await producer.send([records[0]!, stray]);
  await producer.close();
  const [first, second] = await readTopic(transport, topic, 2);
  const decode = decodeEventWith(serde);
  const event = await decode(first!);
  assert.equal(event.id, events[0]!.id);
  assert.deepEqual({ ...(event.data as object) }, { ...order, orderNo: 1 });
  assert.equal(first!.headers['content-type']?.toString(), 'application/avro');
  const failure = await decode(second!).then(
    () => undefined,
    (e: unknown) => e as EffectivelyError,
  );
  assert.equal(failure?.code, 'EFF_SCHEMA_UNKNOWN_ID');
  assert.equal(failure?.retryable, false);
  assert.equal(failure?.details.offset, second!.offset);
  // the plain JSON decoder cannot read it: the serde's decoder is the hook the consumer needs
  assert.equal(await code(Promise.resolve().then(() => decodeEvent(first!))), 'EFF_DECODE_FAILED');
}
