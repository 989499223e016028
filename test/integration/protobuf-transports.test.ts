// Protobuf events through the registry and both transports: the embedded registry with the embedded (PostgreSQL)
// transport, and the registry served over the Confluent API subset with Kafka. Each record is also read the way any
// registry client reads it, by hand from the bytes: magic byte, schema id, message indexes, payload, the schema and
// its references fetched over the HTTP API, decoded with a plain protobufjs root.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import protobuf from 'protobufjs';
import { createEvent } from '../../src/envelope/event.ts';
import { httpSchemaRegistry } from '../../src/schema/registry/http.ts';
import { serveSchemaRegistry } from '../../src/schema/registry/http-server.ts';
import type { SchemaRegistry } from '../../src/schema/registry/port.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { decodeEventWith, encodeEventWith } from '../../src/schema/serde/envelope.ts';
import { protobufSerde } from '../../src/schema/serde/protobuf.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema, freshTopic } from '../support/fixtures.ts';
import { moneyProto, orderProto, protoOrder } from '../support/protobuf-fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

const imports = { 'common/money.proto': moneyProto };

async function served(t: TestContext) {
  const { db, schema } = await freshSchema(t);
  const server = await serveSchemaRegistry(postgresSchemaRegistry({ db, schema }));
  t.after(() => server.close());
  return { db, schema, url: server.url };
}

/** The record's value read by the wire format's rules alone, with the schema and references from the HTTP API. */
async function readByHand(url: string, value: Buffer): Promise<Record<string, unknown>> {
  assert.equal(value[0], 0, 'magic byte');
  const id = value.readInt32BE(1);
  assert.equal(value[5], 0, 'message indexes [0]: the single byte 0');
  const get = async (path: string) => (await (await fetch(`${url}${path}`)).json()) as Record<string, unknown>;
  const stored = await get(`/schemas/ids/${id}`);
  assert.equal(stored.schemaType, 'PROTOBUF');
  const root = new protobuf.Root();
  for (const ref of stored.references as { subject: string; version: number }[]) {
    const version = await get(`/subjects/${encodeURIComponent(ref.subject)}/versions/${ref.version}`);
    protobuf.parse(String(version.schema), root, { keepCase: true });
  }
  protobuf.parse(String(stored.schema), root, { keepCase: true });
  for (const file of ['google/protobuf/timestamp.proto', 'google/protobuf/wrappers.proto'])
    root.addJSON(protobuf.common.get(file)?.nested ?? {});
  const type = root.lookupType('boxoffice.Order');
  return type.toObject(type.decode(value.subarray(6)), { longs: String, enums: String, defaults: true });
}

async function roundTrip(transport: Parameters<typeof readTopic>[0], topic: string, registry: SchemaRegistry) {
  const serde = protobufSerde({ registry, schema: orderProto, imports });
  const events = [1, 2].map((n) =>
    createEvent({
      topic,
      type: 'OrderConfirmed',
      source: '/boxoffice',
      key: `o-${n}`,
      data: { ...protoOrder, orderNo: String(n) },
    }),
  );
  const producer = transport.producer();
  await producer.send(await Promise.all(events.map(encodeEventWith(serde))));
  await producer.close();
  const records = await readTopic(transport, topic, 2);
  const decode = decodeEventWith(serde);
  for (const [i, record] of records.entries()) {
    const event = await decode(record);
    assert.equal(event.id, events[i]!.id);
    assert.deepEqual(event.data, { ...protoOrder, orderNo: String(i + 1) });
    assert.equal(record.headers['content-type']?.toString(), 'application/protobuf');
  }
  return records;
}

test('Protobuf events through the embedded transport and the embedded registry', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema, url } = await served(t);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'pb-orders', partitions: 1 }]);
  const records = await roundTrip(transport, 'pb-orders', postgresSchemaRegistry({ db, schema }));
  assert.deepEqual(await readByHand(url, records[0]!.value!), { ...protoOrder, orderNo: '1' });
});

test('Protobuf events through Kafka, the registry over HTTP', async (t) => {
  if (!(await needs(t, 'postgres', 'kafka'))) return;
  const { url } = await served(t);
  const { transport, topic } = await freshTopic(t, 1);
  const records = await roundTrip(transport, topic, httpSchemaRegistry({ url }));
  assert.deepEqual(await readByHand(url, records[1]!.value!), { ...protoOrder, orderNo: '2' });
});
