// The Protobuf serde against the embedded registry (on the PostgreSQL server: PGlite's start-up alone would cost this
// file ten seconds of CI): the wire format with its message indexes, proto3 and
// proto2, imports registered as references, nested messages, enums, oneof, maps, well-known types, a reader on a
// newer schema, and each failure as its coded, permanent error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EffectivelyError } from '../../src/errors.ts';
import { parseProto } from '../../src/schema/protobuf/proto-file.ts';
import type { SchemaRegistry } from '../../src/schema/registry/port.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { decodeMessageIndexes, encodeMessageIndexes } from '../../src/schema/serde/message-indexes.ts';
import { protobufSerde } from '../../src/schema/serde/protobuf.ts';
import { encodeWire } from '../../src/schema/serde/wire.ts';
import { freshSchema } from '../support/fixtures.ts';
import { moneyProto, orderProto, protoOrder } from '../support/protobuf-fixtures.ts';
import { needs } from '../support/services.ts';

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<EffectivelyError> {
  const error = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof EffectivelyError, String(error));
  assert.equal(error.code, code, error.message);
  return error;
}

const imports = { 'common/money.proto': moneyProto };

test('message indexes: [0] is one zero byte, others a zig-zag count and zig-zag indexes', () => {
  assert.deepEqual([...encodeMessageIndexes([0])], [0]);
  assert.deepEqual([...encodeMessageIndexes([1])], [2, 2]);
  assert.deepEqual([...encodeMessageIndexes([0, 2])], [4, 0, 4]);
  for (const indexes of [[0], [1], [0, 2], [3, 0, 70]]) {
    const bytes = Buffer.concat([encodeMessageIndexes(indexes), Buffer.from([9, 9])]);
    assert.deepEqual(decodeMessageIndexes(bytes), { indexes, payload: Buffer.from([9, 9]) });
  }
  assert.throws(() => decodeMessageIndexes(Buffer.from([6, 2])), /past the end/);
  assert.throws(() => decodeMessageIndexes(Buffer.from([0xfe, 0x7f])), /not a valid header/);
});

test('the Protobuf serde against the embedded registry', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const registry: SchemaRegistry = postgresSchemaRegistry({ db, schema });
  await t.test(
    'proto3 round trip: nested message, enum, oneof, map, well-known types, an import as a reference',
    async () => {
      const serde = protobufSerde({ registry, schema: orderProto, imports });
      const bytes = await serde.serialize('pb-orders', protoOrder);
      assert.equal(bytes[0], 0);
      assert.equal(bytes[5], 0, 'the first message: message indexes [0], one zero byte');
      assert.deepEqual(await serde.deserialize('pb-orders', bytes), protoOrder);
      // the import went in first, under its import name, and the schema references it
      const stored = await registry.getById(bytes.readInt32BE(1));
      assert.equal(stored.format, 'protobuf');
      assert.deepEqual(stored.references, [{ name: 'common/money.proto', subject: 'common/money.proto', version: 1 }]);
      assert.deepEqual(await registry.versions('common/money.proto'), [1]);
      assert.equal(serde.contentType, 'application/protobuf');
    },
  );

  await t.test('a nested message as the record: its message indexes, read back by full name', async () => {
    const serde = protobufSerde({ registry, schema: orderProto, imports, message: 'boxoffice.Order.Line' });
    const bytes = await serde.serialize('pb-lines', { sku: 'A1', quantity: 2 });
    assert.deepEqual(decodeMessageIndexes(bytes.subarray(5)).indexes, [0, 0]);
    assert.deepEqual(await serde.deserialize('pb-lines', bytes), { sku: 'A1', quantity: 2 });
    // naive twin: a reader that does not skip the message indexes reads them as the message's first bytes
    const line = parseProto({ schema: orderProto, imports }).root.lookupType('boxoffice.Order.Line');
    const naive = (() => {
      try {
        return line.toObject(line.decode(bytes.subarray(5)));
      } catch (error) {
        return error;
      }
    })();
    assert.notDeepEqual(naive, { sku: 'A1', quantity: 2 });
    assert.equal(serde.subjectFor('t'), 't-value');
    assert.equal(
      protobufSerde({ registry, schema: orderProto, imports, subject: 'record' }).subjectFor('t'),
      'boxoffice.Order',
    );
  });

  await t.test(
    'a reader on a newer schema: new fields at their defaults; a message it lacks is incompatible',
    async () => {
      const topic = 'pb-evolve';
      const writer = protobufSerde({ registry, schema: orderProto, imports });
      const bytes = await writer.serialize(topic, protoOrder);
      const newer = orderProto.replace('  Status status = 9;', '  Status status = 9;\n  string note = 12;');
      const reader = protobufSerde({ registry, schema: newer, imports, autoRegister: false });
      assert.deepEqual(await reader.deserialize(topic, bytes), { ...protoOrder, note: '' });
      const other = protobufSerde({
        registry,
        schema: 'syntax = "proto3"; package other; message Order { string id = 1; }',
      });
      await rejectsWith(other.deserialize(topic, bytes), 'EFF_SCHEMA_INCOMPATIBLE');
    },
  );

  await t.test('proto2: a required field missing is refused on write, and on read of bytes without it', async () => {
    const schema =
      'syntax = "proto2"; package legacy; message Seat { required string row = 1; optional int32 number = 2 [default = 1]; }';
    const serde = protobufSerde({ registry, schema });
    const bytes = await serde.serialize('pb-legacy', { row: 'B' });
    assert.deepEqual(await serde.deserialize('pb-legacy', bytes), { row: 'B', number: 1 });
    await rejectsWith(serde.serialize('pb-legacy', { number: 3 }), 'EFF_SCHEMA_ENCODE_FAILED');
    const empty = encodeWire(bytes.readInt32BE(1), Buffer.from([0]));
    await rejectsWith(serde.deserialize('pb-legacy', empty), 'EFF_SCHEMA_DECODE_FAILED');
  });

  await t.test(
    'values that do not fit are refused with their paths; broken records are typed decode failures',
    async () => {
      const serde = protobufSerde({ registry, schema: orderProto, imports });
      const error = await rejectsWith(
        serde.serialize('pb-orders', { ...protoOrder, orderNo: 'seven', extra: 1, card: 'x', cash: 2 }),
        'EFF_SCHEMA_ENCODE_FAILED',
      );
      assert.match(error.message, /orderNo/);
      assert.match(error.message, /no field `extra`/);
      assert.match(error.message, /oneof has card and cash set/);
      const bytes = await serde.serialize('pb-orders', protoOrder);
      const id = bytes.readInt32BE(1);
      await rejectsWith(
        serde.deserialize('pb-orders', encodeWire(id, Buffer.from([2, 14]))),
        'EFF_SCHEMA_DECODE_FAILED',
      );
      await rejectsWith(
        serde.deserialize('pb-orders', encodeWire(id, Buffer.from([0, 0x0a, 0x09]))),
        'EFF_SCHEMA_DECODE_FAILED',
      );
      await rejectsWith(
        serde.deserialize('pb-orders', encodeWire(id, Buffer.from([0xff]))),
        'EFF_SCHEMA_DECODE_FAILED',
      );
    },
  );

  await t.test('the registry refuses a reused field number at BACKWARD, and an import it is not given', async () => {
    const subject = 'pb-compat-value';
    await registry.register(subject, 'syntax = "proto3"; message Order { int64 total = 4; }', 'protobuf');
    const reused = await rejectsWith(
      registry.register(subject, 'syntax = "proto3"; message Order { string currency = 4; }', 'protobuf'),
      'EFF_SCHEMA_INCOMPATIBLE',
    );
    assert.match(JSON.stringify(reused.details.violations), /field-number-reused/);
    await registry.register(subject, 'syntax = "proto3"; message Order { int64 total_cents = 4; }', 'protobuf');
    await rejectsWith(registry.register('pb-noimport', orderProto, 'protobuf'), 'EFF_SCHEMA_INVALID');
    await rejectsWith(
      registry.register('pb-badref', orderProto, 'protobuf', [
        { name: 'common/money.proto', subject: 'nope', version: 1 },
      ]),
      'EFF_SCHEMA_INVALID',
    );
  });
});
