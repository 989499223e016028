// Protobuf compatibility, table-driven: old/new pairs with the rules each level reports (FULL is both directions).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkCompatibility, type Level } from '../../src/schema/compat/index.ts';

/** A proto3 file (or proto2 with `syntax`) of package `shop` holding `body`. */
const file = (body: string, { syntax = 'proto3', pkg = 'shop' } = {}) =>
  `syntax = "${syntax}";\npackage ${pkg};\n${body}`;
const order = (fields: string, extra = '') => file(`message Order {\n${fields}\n}\n${extra}`);

interface Case {
  name: string;
  old: string;
  next: string;
  backward: string[];
  forward: string[];
}

const cases: Case[] = [
  {
    name: 'field added',
    old: order('string id = 1;'),
    next: order('string id = 1; int32 seats = 2;'),
    backward: [],
    forward: [],
  },
  {
    name: 'field removed',
    old: order('string id = 1; int32 seats = 2;'),
    next: order('string id = 1;'),
    backward: [],
    forward: [],
  },
  {
    name: 'field number reused for another type (the seeds)',
    old: order('string id = 1; int64 total = 4;'),
    next: order('string id = 1; string currency = 4;'),
    backward: ['field-number-reused'],
    forward: ['field-number-reused'],
  },
  {
    name: 'field renumbered',
    old: order('string id = 1; int64 total = 4;'),
    next: order('string id = 1; int64 total = 5;'),
    backward: ['field-renumbered'],
    forward: ['field-renumbered'],
  },
  {
    name: 'renamed, same number and type: a note, no violation',
    old: order('int64 total = 4;'),
    next: order('int64 total_cents = 4;'),
    backward: [],
    forward: [],
  },
  {
    name: 'int32 → int64 (one varint group)',
    old: order('int32 n = 1;'),
    next: order('int64 n = 1;'),
    backward: [],
    forward: [],
  },
  {
    name: 'int32 → enum (varint)',
    old: order('int32 n = 1;'),
    next: order('Kind n = 1;', 'enum Kind { A = 0; }'),
    backward: [],
    forward: [],
  },
  { name: 'string → bytes', old: order('string s = 1;'), next: order('bytes s = 1;'), backward: [], forward: [] },
  {
    name: 'fixed32 → sfixed32',
    old: order('fixed32 n = 1;'),
    next: order('sfixed32 n = 1;'),
    backward: [],
    forward: [],
  },
  {
    name: 'int32 → sint32 (zig-zag is another encoding)',
    old: order('int32 n = 1;'),
    next: order('sint32 n = 1;'),
    backward: ['type-changed'],
    forward: ['type-changed'],
  },
  {
    name: 'int64 → double',
    old: order('int64 n = 1;'),
    next: order('double n = 1;'),
    backward: ['type-changed'],
    forward: ['type-changed'],
  },
  {
    name: 'message type changed',
    old: order('Line l = 1;', 'message Line { string sku = 1; } message Seat { string row = 1; }'),
    next: order('Seat l = 1;', 'message Line { string sku = 1; } message Seat { string row = 1; }'),
    backward: ['type-changed'],
    forward: ['type-changed'],
  },
  {
    name: 'singular → repeated',
    old: order('string seat = 1;'),
    next: order('repeated string seat = 1;'),
    backward: [],
    forward: ['label-changed'],
  },
  {
    name: 'map value type changed',
    old: order('map<string, int32> seats = 1;'),
    next: order('map<string, string> seats = 1;'),
    backward: ['type-changed'],
    forward: ['type-changed'],
  },
  {
    name: 'field moved into a oneof',
    old: order('string card = 1; int32 cash = 2;'),
    next: order('oneof pay { string card = 1; int32 cash = 2; }'),
    backward: ['oneof-changed'],
    forward: [],
  },
  {
    name: 'field moved out of a oneof',
    old: order('oneof pay { string card = 1; int32 cash = 2; }'),
    next: order('string card = 1; oneof pay { int32 cash = 2; }'),
    backward: [],
    forward: ['oneof-changed'],
  },
  {
    name: 'field moved into an existing oneof',
    old: order('string card = 1; oneof pay { int32 cash = 2; }'),
    next: order('oneof pay { string card = 1; int32 cash = 2; }'),
    backward: ['oneof-changed'],
    forward: [],
  },
  {
    name: 'a single field into a new oneof, a oneof renamed',
    old: order('string card = 1; oneof pay { int32 cash = 2; bool free = 3; }'),
    next: order('oneof card_only { string card = 1; } oneof payment { int32 cash = 2; bool free = 3; }'),
    backward: [],
    forward: [],
  },
  {
    name: 'proto3 optional (presence) added',
    old: order('int32 n = 1;'),
    next: order('optional int32 n = 1;'),
    backward: [],
    forward: [],
  },
  {
    name: 'field added to a oneof',
    old: order('oneof pay { string card = 1; }'),
    next: order('oneof pay { string card = 1; int32 cash = 2; }'),
    backward: [],
    forward: [],
  },
  {
    name: 'proto2: required field removed (old readers need it)',
    old: order('required string id = 1; optional int32 n = 2;', '').replace('proto3', 'proto2'),
    next: order('optional int32 n = 2;').replace('proto3', 'proto2'),
    backward: [],
    forward: ['required-field-missing'],
  },
  {
    name: 'proto2: required field added (old data lacks it)',
    old: order('optional int32 n = 2;').replace('proto3', 'proto2'),
    next: order('required string id = 1; optional int32 n = 2;').replace('proto3', 'proto2'),
    backward: ['required-field-missing'],
    forward: [],
  },
  {
    name: 'proto2: optional made required',
    old: order('optional string id = 1;').replace('proto3', 'proto2'),
    next: order('required string id = 1;').replace('proto3', 'proto2'),
    backward: ['field-made-required'],
    forward: [],
  },
  {
    name: 'nested message field changed',
    old: order('Line line = 1; message Line { int32 qty = 1; }'),
    next: order('Line line = 1; message Line { string qty = 1; }'),
    backward: ['type-changed'],
    forward: ['type-changed'],
  },
  {
    name: 'message removed',
    old: order('string id = 1;', 'message Refund { string id = 1; }'),
    next: order('string id = 1;'),
    backward: ['message-removed'],
    forward: [],
  },
  {
    name: 'enum removed',
    old: order('string id = 1;', 'enum Kind { A = 0; }'),
    next: order('string id = 1;'),
    backward: ['enum-removed'],
    forward: [],
  },
  {
    name: 'message added after the record',
    old: order('string id = 1;'),
    next: order('string id = 1;', 'message Refund { string id = 1; }'),
    backward: [],
    forward: [],
  },
  {
    name: 'record moved to another package',
    old: order('string id = 1;'),
    next: file('message Order { string id = 1; }', { pkg: 'shop.v2' }),
    backward: ['message-removed'],
    forward: ['record-message-unknown'],
  },
];

const rules = (c: Case, level: Level) =>
  checkCompatibility({ format: 'protobuf', level, old: [c.old], next: c.next }).violations.map((v) => v.rule);

for (const c of cases) {
  test(`protobuf: ${c.name}`, () => {
    assert.deepEqual(rules(c, 'BACKWARD'), c.backward, 'BACKWARD');
    assert.deepEqual(rules(c, 'FORWARD'), c.forward, 'FORWARD');
    assert.deepEqual(rules(c, 'FULL'), [...c.backward, ...c.forward], 'FULL');
    assert.deepEqual(rules(c, 'FULL_TRANSITIVE'), [...c.backward, ...c.forward], 'FULL_TRANSITIVE');
  });
}

test('protobuf: a rename is reported as a note (JSON mapping), and transitive levels check every old schema', () => {
  const result = checkCompatibility({
    format: 'protobuf',
    level: 'FULL',
    old: [order('int64 total = 4;')],
    next: order('int64 total_cents = 4;'),
  });
  assert.equal(result.compatible, true);
  assert.deepEqual(
    result.notes.map((n) => [n.rule, n.path]),
    [['field-renamed', 'shop.Order.total']],
  );
  const v1 = order('string id = 1; int64 total = 4;');
  const v2 = order('string id = 1;');
  const v3 = order('string id = 1; string total = 4;');
  const at = (level: Level) => checkCompatibility({ format: 'protobuf', level, old: [v1, v2], next: v3 }).compatible;
  assert.equal(at('BACKWARD'), true);
  assert.equal(at('BACKWARD_TRANSITIVE'), false);
});

test('protobuf: imports are resolved from the given files; a missing one is EFF_SCHEMA_INVALID', () => {
  const common = 'syntax = "proto3"; package common; message Money { int64 units = 1; }';
  const moneyV2 = 'syntax = "proto3"; package common; message Money { string units = 1; }';
  const uses = file('import "common.proto";\nmessage Order { common.Money total = 1; }');
  const result = checkCompatibility({
    format: 'protobuf',
    level: 'BACKWARD',
    old: [{ schema: uses, imports: { 'common.proto': common } }],
    next: { schema: uses, imports: { 'common.proto': moneyV2 } },
  });
  assert.deepEqual(
    result.violations.map((v) => [v.rule, v.path]),
    [['type-changed', 'common.Money.units']],
  );
  assert.throws(() => checkCompatibility({ format: 'protobuf', level: 'BACKWARD', old: [uses], next: uses }), {
    code: 'EFF_SCHEMA_INVALID',
  });
});

const cli = fileURLToPath(new URL('../../bin/effectively.js', import.meta.url));
const examples = fileURLToPath(new URL('../../examples/schemas/order-confirmed/', import.meta.url));

test('effectively schema check --format protobuf refuses the reused field number with a clear line', async () => {
  const run = (next: string) =>
    promisify(execFile)(process.execPath, [
      cli,
      'schema',
      'check',
      '--format',
      'protobuf',
      '--level',
      'BACKWARD',
      '--old',
      `${examples}v1.proto`,
      '--new',
      `${examples}${next}`,
    ]).then(
      ({ stdout }) => ({ code: 0, lines: stdout.trim().split('\n') }),
      (error: { code: number; stdout: string }) => ({ code: error.code, lines: error.stdout.trim().split('\n') }),
    );
  const reused = await run('v2-reused-number.proto');
  assert.equal(reused.code, 1);
  assert.deepEqual(reused.lines, [
    "BACKWARD vs v1.proto: field number 4 was `total` (int64) in old and is `currency` (string) in new: a number reused for another field reads one's bytes as the other (old data cannot be read); give the new field a new number and `reserved 4;` the old one",
    'schema check: INCOMPATIBLE, 1 violation (level BACKWARD, protobuf, against v1.proto)',
  ]);
  const renamed = await run('v2-renamed.proto');
  assert.equal(renamed.code, 0);
  assert.match(renamed.lines[0]!, /^note vs v1.proto: field 4 renamed from `total` to `total_cents`: .*JSON name/);
  assert.equal((await run('v2-currency.proto')).code, 0);
});

test('protobuf: the reused number is a real break, and a check matching fields by name cannot see it', async () => {
  const { readFile } = await import('node:fs/promises');
  const { parseProto } = await import('../../src/schema/protobuf/proto-file.ts');
  const text = (name: string) => readFile(`${examples}${name}`, 'utf8');
  const [v1, v2] = [parseProto(await text('v1.proto')), parseProto(await text('v2-reused-number.proto'))];
  const [old, next] = [v1.root.lookupType('boxoffice.OrderConfirmed'), v2.root.lookupType('boxoffice.OrderConfirmed')];
  // old data read with the new schema: the int64 under number 4 does not fit the string now there; the reader
  // drops it (protobufjs skips a field of the wrong wire type; other runtimes read garbage or fail): 12900 is gone
  const bytes = old.encode(old.fromObject({ order_id: 'o-1', total: 12900 })).finish();
  const read = next.toObject(next.decode(bytes));
  assert.deepEqual(read, { order_id: 'o-1' });
  assert.ok(!JSON.stringify(read).includes('12900'));
  // naive twin: compared by name (as Avro and JSON Schema fields are), v1 → v2 only drops `total` and adds
  // `currency`, two optional proto3 fields: nothing to report, although every old total is misread
  const byName = old.fieldsArray.filter((f) => next.fields[f.name] && next.fields[f.name]!.type !== f.type);
  assert.deepEqual(byName, []);
  assert.equal(
    checkCompatibility({
      format: 'protobuf',
      level: 'BACKWARD',
      old: [await text('v1.proto')],
      next: await text('v2-reused-number.proto'),
    }).violations[0]?.rule,
    'field-number-reused',
  );
});

test('protobuf: the label rule by direction is what a decoder does', async () => {
  const { parseProto } = await import('../../src/schema/protobuf/proto-file.ts');
  const one = parseProto(order('int32 n = 1;')).root.lookupType('shop.Order');
  const list = parseProto(order('repeated int32 n = 1;')).root.lookupType('shop.Order');
  // a single value read by a list reader: a list of one (compatible)
  assert.deepEqual(list.toObject(list.decode(one.encode({ n: 7 }).finish())), { n: [7] });
  // a packed list read by a single-value reader: nothing at all (refused)
  assert.deepEqual(one.toObject(one.decode(list.encode({ n: [7, 8] }).finish())), {});
  const rule = (old: string, next: string) =>
    checkCompatibility({ format: 'protobuf', level: 'BACKWARD', old: [old], next }).violations.map((v) => v.rule);
  assert.deepEqual(rule(order('int32 n = 1;'), order('repeated int32 n = 1;')), []);
  assert.deepEqual(rule(order('repeated int32 n = 1;'), order('int32 n = 1;')), ['label-changed']);
});
