// Avro schema resolution rules, in both directions, and the levels (transitive or not) on top of them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { EffectivelyError } from '../../src/errors.ts';
import { checkCompatibility, type Level, validateSchema } from '../../src/schema/compat/index.ts';

const record = (fields: unknown[], name = 'OrderConfirmed', extra: Record<string, unknown> = {}) => ({
  type: 'record',
  name,
  ...extra,
  fields,
});
const field = (name: string, type: unknown, extra: Record<string, unknown> = {}) => ({ name, type, ...extra });

/** The violation messages of `next` against `old`. */
const messages = (old: unknown, next: unknown, level: Level = 'BACKWARD') =>
  checkCompatibility({ format: 'avro', level, old: [old], next }).violations.map((v) => v.message);

const one = (old: unknown, next: unknown, level: Level = 'BACKWARD') => {
  const found = messages(old, next, level);
  assert.equal(found.length, 1, `expected one violation, got ${JSON.stringify(found)}`);
  return found[0]!;
};

test('primitive promotions are compatible one way only', () => {
  const promotions: [string, string][] = [
    ['int', 'long'],
    ['int', 'float'],
    ['int', 'double'],
    ['long', 'float'],
    ['long', 'double'],
    ['float', 'double'],
    ['string', 'bytes'],
    ['bytes', 'string'],
  ];
  for (const [from, to] of promotions) {
    assert.deepEqual(messages(record([field('total', from)]), record([field('total', to)])), [], `${from} → ${to}`);
  }
  assert.equal(
    one(record([field('total', 'long')]), record([field('total', 'int')])),
    'field `total` changed type long → int: new readers cannot read long as int',
  );
  // FORWARD: the old schema (int) reads new data (long).
  assert.equal(
    one(record([field('total', 'int')]), record([field('total', 'long')]), 'FORWARD'),
    'field `total` changed type int → long: old readers cannot read long as int',
  );
  assert.equal(
    one(record([field('total', 'int')]), record([field('total', 'string')])),
    'field `total` changed type int → string: new readers cannot read int as string',
  );
  assert.equal(
    one('int', 'boolean'),
    'the top level changed type int → boolean: new readers cannot read int as boolean',
  );
});

test('a field added with a default is compatible both ways; without one it breaks BACKWARD only', () => {
  const v1 = record([field('orderId', 'string')]);
  const withDefault = record([field('orderId', 'string'), field('currency', 'string', { default: 'BRL' })]);
  assert.deepEqual(messages(v1, withDefault, 'FULL'), []);
  const withoutDefault = record([field('orderId', 'string'), field('couponCode', 'string')]);
  assert.equal(one(v1, withoutDefault), 'field `couponCode` added without a default: old data cannot be read');
  assert.deepEqual(messages(v1, withoutDefault, 'FORWARD'), [], 'old readers ignore the new field');
});

test('a removed field breaks FORWARD unless the old schema gave it a default', () => {
  const v1 = record([field('orderId', 'string'), field('note', 'string')]);
  const v2 = record([field('orderId', 'string')]);
  assert.deepEqual(messages(v1, v2), [], 'new readers ignore the old field');
  assert.equal(
    one(v1, v2, 'FORWARD'),
    'field `note` removed, and the old schema gives it no default: old readers cannot read new data',
  );
  const v1WithDefault = record([field('orderId', 'string'), field('note', 'string', { default: '' })]);
  assert.deepEqual(messages(v1WithDefault, v2, 'FULL'), []);
});

test('a renamed field needs a reader alias; the explanation says so', () => {
  const v1 = record([field('total', 'int')]);
  const renamed = record([field('totalCents', 'int')]);
  assert.equal(
    one(v1, renamed),
    'field `totalCents` added without a default: old data cannot be read (a rename needs an alias: if it replaces `total`, give it "aliases": ["total"])',
  );
  assert.equal(
    one(v1, renamed, 'FORWARD'),
    'field `total` removed, and the old schema gives it no default: old readers cannot read new data (renamed to `totalCents`? old readers still look for `total`)',
  );
  const aliased = record([field('totalCents', 'int', { aliases: ['total'] })]);
  assert.deepEqual(messages(v1, aliased), []);
  // The alias is matched, and the field's type is still checked through it.
  assert.equal(
    one(v1, record([field('totalCents', 'string', { aliases: ['total'] })])),
    'field `totalCents` changed type int → string: new readers cannot read int as string',
  );
});

test('records match by unqualified name or reader alias', () => {
  const v1 = record([field('a', 'int')], 'Order', { namespace: 'shop' });
  assert.deepEqual(messages(v1, record([field('a', 'int')], 'Order', { namespace: 'boxoffice' })), []);
  assert.deepEqual(messages(v1, record([field('a', 'int')], 'Purchase', { aliases: ['shop.Order'] })), []);
  assert.equal(
    one(v1, record([field('a', 'int')], 'Purchase')),
    "the top level: record renamed Order → Purchase: old data cannot be read (list `shop.Order` in the new record's `aliases`)",
  );
  assert.equal(
    one(v1, record([field('a', 'int')], 'Purchase'), 'FORWARD'),
    'the top level: record renamed Order → Purchase: old readers cannot read new data (old readers know it only as `shop.Order`)',
  );
});

test('enums: a writer symbol the reader lacks needs the reader enum default', () => {
  const status = (symbols: string[], extra: Record<string, unknown> = {}) =>
    record([field('status', { type: 'enum', name: 'Status', symbols, ...extra })]);
  const v1 = status(['CONFIRMED', 'CANCELLED']);
  const added = status(['CONFIRMED', 'CANCELLED', 'REFUNDED']);
  assert.deepEqual(messages(v1, added), []);
  assert.equal(
    one(v1, added, 'FORWARD'),
    'field `status`: enum Status gained REFUNDED, and the old enum has no `default`: old readers cannot read new data',
  );
  assert.deepEqual(messages(status(['CONFIRMED', 'CANCELLED'], { default: 'CONFIRMED' }), added, 'FORWARD'), []);
  assert.equal(
    one(v1, status(['CONFIRMED'])),
    'field `status`: enum Status dropped CANCELLED and has no `default`: old data cannot be read',
  );
  assert.deepEqual(messages(v1, status(['CONFIRMED', 'UNKNOWN'], { default: 'UNKNOWN' })), []);
  const renamed = record([field('status', { type: 'enum', name: 'OrderStatus', symbols: ['CONFIRMED', 'CANCELLED'] })]);
  assert.match(one(v1, renamed), /field `status`: enum renamed Status → OrderStatus: old data cannot be read/);
  const aliased = record([
    field('status', { type: 'enum', name: 'OrderStatus', aliases: ['Status'], symbols: ['CONFIRMED', 'CANCELLED'] }),
  ]);
  assert.deepEqual(messages(v1, aliased), []);
});

test('fixed: same name and size', () => {
  const hash = (size: number, name = 'Hash') => record([field('hash', { type: 'fixed', name, size })]);
  assert.deepEqual(messages(hash(16), hash(16), 'FULL'), []);
  assert.equal(one(hash(16), hash(32)), 'field `hash`: fixed Hash changed size 16 → 32 bytes: old data cannot be read');
  assert.match(one(hash(16), hash(16, 'Digest')), /field `hash`: fixed renamed Hash → Digest/);
});

test('arrays and maps are checked through their items and values, with the path', () => {
  const seats = (items: unknown) => record([field('seats', { type: 'array', items })]);
  assert.deepEqual(messages(seats('int'), seats('long')), []);
  const violations = checkCompatibility({
    format: 'avro',
    level: 'BACKWARD',
    old: [seats('string')],
    next: seats('int'),
  }).violations;
  assert.equal(violations[0]?.path, 'OrderConfirmed.seats[]');
  assert.equal(
    violations[0]?.message,
    'items of field `seats` changed type string → int: new readers cannot read string as int',
  );
  const prices = (values: unknown) => record([field('prices', { type: 'map', values })]);
  assert.equal(
    one(prices('double'), prices('float')),
    'values of field `prices` changed type double → float: new readers cannot read double as float',
  );
  const lines = (sku: string) =>
    record([field('lines', { type: 'array', items: record([field('sku', sku)], 'Line') })]);
  assert.equal(
    one(lines('string'), lines('long')),
    'field `lines[].sku` changed type string → long: new readers cannot read string as long',
  );
});

test('unions: writer branches must each resolve; a writer value picks the first matching reader branch', () => {
  const coupon = (type: unknown) => record([field('couponCode', type, { default: null })]);
  const plain = record([field('couponCode', 'string')]);
  // non-union writer → union reader
  assert.deepEqual(messages(plain, coupon(['null', 'string'])), []);
  assert.deepEqual(
    messages(record([field('n', 'int')]), record([field('n', ['null', 'long'], { default: null })])),
    [],
  );
  assert.equal(
    one(record([field('n', 'boolean')]), record([field('n', ['null', 'string'], { default: null })])),
    'field `n` changed type boolean → union [null, string]: new readers cannot read boolean as any of null, string',
  );
  // union writer → non-union reader: every branch must resolve
  assert.equal(
    one(plain, coupon(['null', 'string']), 'FORWARD'),
    'field `couponCode` changed type string → union [null, string]: old readers cannot read null as string',
  );
  // union → union: a dropped branch breaks BACKWARD, an added one FORWARD
  const three = coupon(['null', 'string', 'int']);
  const two = coupon(['null', 'string']);
  assert.deepEqual(messages(two, three), []);
  assert.equal(
    one(three, two),
    'field `couponCode` changed type union [null, string, int] → union [null, string]: new readers cannot read int as any of null, string',
  );
  assert.equal(
    one(two, three, 'FORWARD'),
    'field `couponCode` changed type union [null, string] → union [null, string, int]: old readers cannot read int as any of null, string',
  );
  // a record inside a union is still checked field by field
  const customer = (email: unknown) =>
    record([field('customer', ['null', record([field('email', email)], 'Customer')], { default: null })]);
  assert.equal(
    one(customer('string'), customer('int')),
    'field `customer.email` changed type string → int: new readers cannot read string as int',
  );
});

test('named types: referenced by name after their definition, across namespaces, recursive', () => {
  const address = { type: 'record', name: 'Address', namespace: 'geo', fields: [field('city', 'string')] };
  const twice = (billingType: string) =>
    record([field('shipping', address), field('billing', billingType)], 'Order', { namespace: 'shop' });
  assert.doesNotThrow(() => validateSchema('avro', twice('geo.Address')));
  assert.deepEqual(messages(twice('geo.Address'), twice('geo.Address'), 'FULL'), []);
  const cityless = { ...address, fields: [field('town', 'string')] };
  const next = record([field('shipping', cityless), field('billing', 'geo.Address')], 'Order', { namespace: 'shop' });
  const found = messages(twice('geo.Address'), next);
  assert.equal(found.length, 2, 'both uses of the named type are reported');
  assert.match(found[0]!, /^field `shipping.town` added without a default/);

  const list = (extra: unknown[]) =>
    record([field('value', 'int'), field('next', ['null', 'Node'], { default: null }), ...extra], 'Node');
  assert.deepEqual(messages(list([]), list([field('label', 'string', { default: '' })]), 'FULL'), []);
  assert.equal(
    one(list([]), list([field('label', 'string')])),
    'field `label` added without a default: old data cannot be read',
  );
});

test('invalid schemas are refused with EFF_SCHEMA_INVALID and a reason', () => {
  const invalid = (schema: unknown, reason: RegExp) =>
    assert.throws(
      () => validateSchema('avro', schema),
      (e: unknown) => e instanceof EffectivelyError && e.code === 'EFF_SCHEMA_INVALID' && reason.test(e.message),
    );
  invalid(record([field('a', 'Missing')]), /unknown type `Missing`/);
  invalid(
    record([field('a', ['string', 'null'], { default: null })]),
    /union default must match the union’s first branch/,
  );
  invalid(record([field('a', 'int'), field('a', 'long')]), /field `a` appears twice/);
  invalid(record([field('a', ['null', ['int']])]), /cannot hold another union/);
  invalid({ type: 'enum', name: 'E', symbols: ['A', 'A'] }, /duplicate symbols/);
  invalid({ type: 'fixed', name: 'F' }, /size/);
  invalid('integer', /unknown type `integer`/);
});

test('levels: plain levels check the latest old schema, transitive ones all of them', () => {
  const v1 = record([field('a', 'int')]);
  const v2 = record([field('a', 'int'), field('b', 'string', { default: 'x' })]);
  const v3 = record([field('a', 'int'), field('b', 'string')]);
  const run = (level: Level) => checkCompatibility({ format: 'avro', level, old: [v1, v2], next: v3 });
  assert.equal(run('BACKWARD').compatible, true, 'v2 → v3');
  const transitive = run('BACKWARD_TRANSITIVE');
  assert.equal(transitive.compatible, false, 'v1 → v3');
  assert.deepEqual(transitive.checked, [0, 1]);
  assert.deepEqual(
    transitive.violations.map((v) => [v.direction, v.against, v.message]),
    [['BACKWARD', 0, 'field `b` added without a default: old data cannot be read']],
  );

  // FORWARD: v1's readers need `b`, v2's readers have a default for it, v3 drops it.
  const f1 = record([field('a', 'int'), field('b', 'string')]);
  const f2 = record([field('a', 'int'), field('b', 'string', { default: 'x' })]);
  const f3 = record([field('a', 'int')]);
  const forward = (level: Level) => checkCompatibility({ format: 'avro', level, old: [f1, f2], next: f3 });
  assert.equal(forward('FORWARD').compatible, true);
  assert.deepEqual(
    forward('FORWARD_TRANSITIVE').violations.map((v) => [v.direction, v.against]),
    [['FORWARD', 0]],
  );
  assert.equal(forward('FULL').compatible, true);
  assert.deepEqual(
    forward('FULL_TRANSITIVE').violations.map((v) => [v.direction, v.against]),
    [['FORWARD', 0]],
  );
  assert.equal(checkCompatibility({ format: 'avro', level: 'FULL', old: [], next: v1 }).compatible, true);
});

test('the OrderConfirmed examples', () => {
  const load = (name: string) =>
    JSON.parse(readFileSync(new URL(`../../examples/schemas/order-confirmed/${name}.avsc`, import.meta.url), 'utf8'));
  const v1 = load('v1');
  assert.deepEqual(messages(v1, load('v2-currency'), 'FULL_TRANSITIVE'), []);
  assert.match(one(v1, load('v2-total-cents')), /^field `totalCents` added without a default: old data cannot be read/);
  assert.equal(
    one(v1, load('v2-total-string')),
    'field `total` changed type int → string: new readers cannot read int as string',
  );
});
