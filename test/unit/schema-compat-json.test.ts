// JSON Schema compatibility rules: types, required, open and closed content models, enums, nesting, unions, $ref.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { EffectivelyError } from '../../src/errors.ts';
import { checkCompatibility, type Level, validateSchema } from '../../src/schema/compat/index.ts';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});
const closed = (properties: Record<string, unknown>, required: string[] = []) =>
  object(properties, { required, additionalProperties: false });

const messages = (old: unknown, next: unknown, level: Level = 'BACKWARD') =>
  checkCompatibility({ format: 'json', level, old: [old], next }).violations.map((v) => v.message);
const one = (old: unknown, next: unknown, level: Level = 'BACKWARD') => {
  const found = messages(old, next, level);
  assert.equal(found.length, 1, `expected one violation, got ${JSON.stringify(found)}`);
  return found[0]!;
};

test('types: widening is BACKWARD-compatible, narrowing is not (integer is a number)', () => {
  const total = (type: unknown) => closed({ total: { type } }, ['total']);
  assert.deepEqual(messages(total('integer'), total('number')), []);
  assert.deepEqual(messages(total('string'), total(['string', 'null'])), []);
  assert.equal(
    one(total('number'), total('integer')),
    'field `total` changed type number → integer: the new schema rejects number',
  );
  assert.equal(
    one(total('integer'), total('number'), 'FORWARD'),
    'field `total` changed type integer → number: the old schema rejects number',
  );
  assert.equal(
    one(total('integer'), total('string')),
    'field `total` changed type integer → string: the new schema rejects integer',
  );
  assert.equal(
    one({}, { type: 'string' }),
    'the top level changed type any → string: the new schema rejects other types',
  );
});

test('required: adding one breaks BACKWARD, dropping one breaks FORWARD', () => {
  const v1 = closed({ orderId: { type: 'string' }, note: { type: 'string' } }, ['orderId']);
  const noteRequired = closed({ orderId: { type: 'string' }, note: { type: 'string' } }, ['orderId', 'note']);
  assert.equal(one(v1, noteRequired), 'field `note` became required: old data may lack it');
  assert.deepEqual(messages(noteRequired, v1), []);
  assert.equal(
    one(noteRequired, v1, 'FORWARD'),
    'field `note` is no longer required, but the old schema requires it: old readers reject new data that lacks it',
  );
});

test('closed content model: optional properties may be added (BACKWARD) but old readers reject them (FORWARD)', () => {
  const v1 = closed({ orderId: { type: 'string' } }, ['orderId']);
  const v2 = closed({ orderId: { type: 'string' }, currency: { type: 'string', default: 'BRL' } }, ['orderId']);
  assert.deepEqual(messages(v1, v2), []);
  assert.equal(
    one(v1, v2, 'FORWARD'),
    'field `currency` added, but the old schema\'s content model is closed ("additionalProperties": false): old readers reject new data that has it',
  );
  assert.equal(
    one(v2, v1),
    'field `currency` removed from a closed content model: the new schema rejects old data that has it',
  );
  assert.equal(
    one(object({ a: {} }), closed({ a: {} })),
    'the top level closes its content model ("additionalProperties": false): the new schema rejects old data with other properties',
  );
});

test('open content model: removing is BACKWARD-compatible, adding a constrained property is not', () => {
  const v1 = object({ orderId: { type: 'string' } });
  const v2 = object({ orderId: { type: 'string' }, currency: { type: 'string' } });
  assert.equal(
    one(v1, v2),
    'field `currency` added to an open content model: old data may already hold `currency` with any value, which the new schema constrains (close the old model with "additionalProperties": false, or accept any value)',
  );
  assert.deepEqual(messages(v1, object({ orderId: { type: 'string' }, currency: { description: 'anything' } })), []);
  assert.deepEqual(messages(v2, v1), []);
  assert.match(one(v2, v1, 'FORWARD'), /^field `currency` removed from an open content model/);
  // a writer whose other properties are typed: those types are what the new property must accept
  const typedRest = object({ orderId: { type: 'string' } }, { additionalProperties: { type: 'string' } });
  assert.deepEqual(messages(typedRest, v2), []);
});

test('enums and const: widening is BACKWARD-compatible, narrowing is not', () => {
  const status = (values: string[]) => closed({ status: { type: 'string', enum: values } });
  assert.deepEqual(messages(status(['CONFIRMED']), status(['CONFIRMED', 'REFUNDED'])), []);
  assert.equal(
    one(status(['CONFIRMED', 'CANCELLED']), status(['CONFIRMED'])),
    'field `status` dropped enum value "CANCELLED": the new schema rejects old data that has it',
  );
  assert.equal(
    one(status(['CONFIRMED']), status(['CONFIRMED', 'REFUNDED']), 'FORWARD'),
    'field `status` added enum value "REFUNDED": old readers reject new data that has it',
  );
  assert.equal(
    one(closed({ kind: { type: 'string' } }), closed({ kind: { const: 'order' } })),
    'field `kind` is now limited to "order": the new schema rejects other old values',
  );
});

test('nested objects and arrays carry the path; bounds and patterns narrow', () => {
  const customer = (email: unknown) => closed({ customer: closed({ email }, ['email']) }, ['customer']);
  assert.equal(
    one(customer({ type: 'string' }), customer({ type: 'integer' })),
    'field `customer.email` changed type string → integer: the new schema rejects string',
  );
  const lines = (sku: unknown) => closed({ lines: { type: 'array', items: closed({ sku }, ['sku']) } });
  const violations = checkCompatibility({
    format: 'json',
    level: 'BACKWARD',
    old: [lines({ type: 'string', maxLength: 64 })],
    next: lines({ type: 'string', maxLength: 32 }),
  }).violations;
  assert.equal(violations[0]?.path, 'schema.lines[].sku');
  assert.equal(
    violations[0]?.message,
    'field `lines[].sku`: `maxLength` 64 → 32: the new schema rejects values the old one allows',
  );
  assert.deepEqual(messages(lines({ type: 'string', maxLength: 32 }), lines({ type: 'string', maxLength: 64 })), []);
  assert.match(one({ type: 'string' }, { type: 'string', pattern: '^[A-Z]+$' }), /`pattern` none → "\^\[A-Z\]\+\$"/);
  assert.equal(
    one({ type: 'array', items: { type: 'string' } }, { type: 'array', items: { type: 'integer' } }),
    'items of the top level changed type string → integer: the new schema rejects string',
  );
});

test('anyOf/oneOf: every writer branch must fit some reader branch', () => {
  const coupon = (schema: unknown) => closed({ couponCode: schema });
  const either = coupon({ anyOf: [{ type: 'string' }, { type: 'null' }] });
  assert.deepEqual(messages(coupon({ type: 'string' }), either), []);
  assert.equal(
    one(either, coupon({ type: 'string' })),
    'field `couponCode` changed type anyOf [string, null] → string: the new schema rejects null',
  );
  assert.equal(
    one(coupon({ type: 'boolean' }), either),
    'field `couponCode` changed type boolean → anyOf [string, null]: the new schema rejects what no branch of its anyOf accepts',
  );
});

test('local $ref is followed, recursion included; keywords not compared are reported, never passed', () => {
  const withDefs = (email: unknown) => ({
    $defs: { customer: closed({ email, referredBy: { $ref: '#/$defs/customer' } }) },
    ...closed({ customer: { $ref: '#/$defs/customer' } }),
  });
  assert.deepEqual(messages(withDefs({ type: 'string' }), withDefs({ type: 'string' }), 'FULL'), []);
  assert.equal(
    one(withDefs({ type: 'string' }), withDefs({ type: 'integer' })),
    'field `customer.email` changed type string → integer: the new schema rejects string',
  );
  const linked = (value: string) => ({
    $defs: {
      node: closed({ value: { type: value }, next: { anyOf: [{ type: 'null' }, { $ref: '#/$defs/node' }] } }, [
        'value',
      ]),
    },
    $ref: '#/$defs/node',
  });
  assert.deepEqual(messages(linked('integer'), linked('number')), []);
  assert.equal(
    one(linked('number'), linked('integer')),
    'field `value` changed type number → integer: the new schema rejects number',
  );
  assert.equal(
    one({ propertyNames: { maxLength: 9 } }, { propertyNames: { maxLength: 3 } }),
    'the top level: `propertyNames` differs, and this check does not compare it: review the change by hand',
  );
});

test('schemas the check cannot read are refused with EFF_SCHEMA_INVALID', () => {
  const invalid = (schema: unknown, reason: RegExp) =>
    assert.throws(
      () => validateSchema('json', schema),
      (e: unknown) => e instanceof EffectivelyError && e.code === 'EFF_SCHEMA_INVALID' && reason.test(e.message),
    );
  invalid({ $ref: 'other.json#/x' }, /only local references/);
  invalid({ $ref: '#/$defs/missing' }, /points at nothing/);
  invalid({ type: 'text' }, /`type` must be one of/);
  invalid({ properties: { a: 3 } }, /#\/properties\/a: a schema must be an object or a boolean/);
  invalid({ required: 'a' }, /`required` must be an array/);
});

test('transitive levels check every old schema, plain ones the latest only', () => {
  // Each step widens, so BACKWARD holds step by step and over the whole history (inclusion is transitive).
  const w1 = closed({ a: { type: 'integer' } }, ['a']);
  const w2 = closed({ a: { type: 'number' } }, ['a']);
  const w3 = closed({ a: { type: 'number' }, b: { type: 'string' } }, ['a']);
  const run = (level: Level, old: unknown[], next: unknown) => checkCompatibility({ format: 'json', level, old, next });
  assert.equal(run('BACKWARD', [w1, w2], w3).compatible, true);
  assert.equal(run('BACKWARD_TRANSITIVE', [w1, w2], w3).compatible, true);
  // FORWARD: w3's data (any number, a `b`) is read by w1 (integers only, closed) and w2 (closed).
  assert.deepEqual(
    run('FORWARD', [w1, w2], w3).violations.map((v) => [v.against, v.rule]),
    [[1, 'property-added-to-closed-model']],
  );
  assert.deepEqual(
    run('FORWARD_TRANSITIVE', [w1, w2], w3).violations.map((v) => [v.against, v.rule]),
    [
      [0, 'type-changed'],
      [0, 'property-added-to-closed-model'],
      [1, 'property-added-to-closed-model'],
    ],
  );
  assert.deepEqual(
    run('FULL_TRANSITIVE', [w1, w2], w3).violations.map((v) => [v.direction, v.against]),
    [
      ['FORWARD', 0],
      ['FORWARD', 0],
      ['FORWARD', 1],
    ],
  );
});

test('the OrderConfirmed examples', () => {
  const load = (name: string) =>
    JSON.parse(readFileSync(new URL(`../../examples/schemas/order-confirmed/${name}.json`, import.meta.url), 'utf8'));
  const v1 = load('v1');
  assert.deepEqual(messages(v1, load('v2-currency')), []);
  assert.equal(messages(v1, load('v2-currency'), 'FORWARD').length, 2, 'the old model is closed');
  assert.deepEqual(
    checkCompatibility({ format: 'json', level: 'BACKWARD', old: [v1], next: load('v2-total-cents') }).violations.map(
      (v) => v.rule,
    ),
    ['required-added', 'property-removed-from-closed-model'],
  );
  assert.equal(
    one(v1, load('v2-total-string')),
    'field `total` changed type integer → string: the new schema rejects integer',
  );
});
