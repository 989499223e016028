// A hostile Avro payload whose array or map block says billions of items in a few bytes: refused as a decode failure
// at once, where avsc alone loops (and allocates) that many times. The walk reads every good payload to its last byte.
// Naive twin: avsc alone turns 4 bytes into an array of 2,000,000 items.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import avsc from 'avsc';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { AvroBoundsError, checkAvroBounds, maxEmptyItems } from '../../src/schema/serde/avro-bounds.ts';
import { avroVarint } from '../support/avro.ts';

const typeOf = (schema: unknown) => avsc.Type.forSchema(schema as avsc.Schema);
const empty = { type: 'record', name: 'Empty', fields: [] };

const schemas: unknown[] = [
  {
    type: 'record',
    name: 'Order',
    fields: [
      { name: 'id', type: 'string' },
      { name: 'no', type: 'long' },
      { name: 'paid', type: 'boolean' },
      { name: 'total', type: 'double' },
      { name: 'ratio', type: 'float' },
      { name: 'raw', type: 'bytes' },
      { name: 'hash', type: { type: 'fixed', name: 'Hash', size: 16 } },
      { name: 'state', type: { type: 'enum', name: 'State', symbols: ['NEW', 'PAID', 'SENT'] } },
      { name: 'seats', type: { type: 'array', items: 'string' } },
      { name: 'notes', type: { type: 'map', values: ['null', 'int', { type: 'array', items: 'null' }] } },
      { name: 'coupon', type: ['null', 'string'], default: null },
      { name: 'marks', type: { type: 'array', items: empty } },
      { name: 'none', type: { type: 'fixed', name: 'None', size: 0 } },
    ],
  },
  {
    type: 'record',
    name: 'Node',
    fields: [
      { name: 'value', type: 'int' },
      { name: 'next', type: ['null', 'Node'] }, // recursive (a list: avsc's random() ends it)
    ],
  },
  { type: 'array', items: { type: 'map', values: 'long' } },
];

test('every good payload is walked to its last byte (random values of schemas of every kind)', () => {
  for (const schema of schemas) {
    const type = typeOf(schema);
    for (let i = 0; i < 300; i++) {
      const buffer = type.toBuffer(type.random());
      assert.equal(checkAvroBounds(type as never, buffer), buffer.length, JSON.stringify(schema).slice(0, 60));
    }
  }
});

test('a block count past what the bytes can hold is refused at once', () => {
  const cases: [unknown, number[]][] = [
    [{ type: 'array', items: 'int' }, [...avroVarint(2 ** 31), 2, 0]],
    [{ type: 'array', items: 'null' }, [...avroVarint(4_000_000_000), 0]],
    [{ type: 'array', items: empty }, [...avroVarint(-4_000_000_000), ...avroVarint(0), 0]],
    [{ type: 'map', values: 'null' }, [...avroVarint(2 ** 40), 0]],
    [
      { type: 'array', items: { type: 'array', items: 'null' } },
      [...avroVarint(3), ...avroVarint(maxEmptyItems), 0, 0],
    ],
    [{ type: 'string' }, [...avroVarint(1_000_000), 65]],
    [{ type: 'bytes' }, [...avroVarint(-3)]],
    [['null', 'int'], [...avroVarint(7)]],
    [{ type: 'long' }, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]],
  ];
  for (const [schema, bytes] of cases) {
    const started = performance.now();
    assert.throws(() => checkAvroBounds(typeOf(schema) as never, Buffer.from(bytes)), AvroBoundsError);
    assert.ok(performance.now() - started < 1000, `${JSON.stringify(schema)} refused without walking the count`);
  }
  // up to the bound, items of no bytes pass
  const nulls = Buffer.from([...avroVarint(1000), 0]);
  assert.equal(checkAvroBounds(typeOf({ type: 'array', items: 'null' }) as never, nulls), nulls.length);
});

test('naive twin: avsc alone reads 4 bytes as 2,000,000 empty records', () => {
  const payload = Buffer.from([...avroVarint(2_000_000), 0]);
  const items = typeOf({ type: 'array', items: empty }).fromBuffer(payload) as unknown[];
  assert.equal(items.length, 2_000_000);
});

let db: Awaited<ReturnType<typeof pgliteDb>>;
before(async () => {
  db = await pgliteDb();
  await migrate(db);
});
after(() => db.close());

test('the Avro serde turns such a payload into EFF_SCHEMA_DECODE_FAILED, a permanent decode failure', async () => {
  const registry = postgresSchemaRegistry({ db });
  const schema = { type: 'record', name: 'Marks', fields: [{ name: 'marks', type: { type: 'array', items: empty } }] };
  const serde = avroSerde<object>({ registry, schema });
  const good = await serde.serialize('marks', { marks: [{}, {}] });
  assert.equal(((await serde.deserialize('marks', good)) as { marks: unknown[] }).marks.length, 2);
  const hostile = Buffer.concat([good.subarray(0, 5), Buffer.from([...avroVarint(4_000_000_000), 0])]);
  const started = performance.now();
  const error = await serde.deserialize('marks', hostile).then(
    () => assert.fail('decoded'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof EffectivelyError, String(error));
  assert.equal(error.code, 'EFF_SCHEMA_DECODE_FAILED');
  assert.ok(performance.now() - started < 2000, 'refused without looping over the count');
});
