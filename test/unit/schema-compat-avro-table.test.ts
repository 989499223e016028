// Avro compatibility, table-driven: old/new pairs with the verdict at BACKWARD and FORWARD (FULL is both), beside
// the message-level cases of schema-compat-avro.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCompatibility, type Level } from '../../src/schema/compat/index.ts';

const record = (fields: unknown[], name = 'Order') => ({ type: 'record', name, fields });
const f = (name: string, type: unknown, extra: Record<string, unknown> = {}) => ({ name, type, ...extra });
const id = f('id', 'string');
const colors = (symbols: string[]) => ({ type: 'enum', name: 'Color', symbols });

const cases: [name: string, old: unknown, next: unknown, verdicts: [backward: boolean, forward: boolean]][] = [
  ['field added with a default', record([id]), record([id, f('note', 'string', { default: '' })]), [true, true]],
  ['field added without a default', record([id]), record([id, f('note', 'string')]), [false, true]],
  ['field with a default removed', record([id, f('note', 'string', { default: '' })]), record([id]), [true, true]],
  ['field without a default removed', record([id, f('note', 'string')]), record([id]), [true, false]],
  ['int → long (a promotion)', record([f('n', 'int')]), record([f('n', 'long')]), [true, false]],
  ['string → bytes (both ways)', record([f('s', 'string')]), record([f('s', 'bytes')]), [true, true]],
  ['int → string', record([f('n', 'int')]), record([f('n', 'string')]), [false, false]],
  ['enum symbol added', record([f('c', colors(['RED']))]), record([f('c', colors(['RED', 'BLUE']))]), [true, false]],
  ['union widened', record([f('u', ['null', 'string'])]), record([f('u', ['null', 'string', 'int'])]), [true, false]],
  [
    'field renamed with an alias in the new schema',
    record([f('total', 'long')]),
    record([f('amount', 'long', { aliases: ['total'] })]),
    [true, false],
  ],
  [
    'array items int → long',
    record([f('a', { type: 'array', items: 'int' })]),
    record([f('a', { type: 'array', items: 'long' })]),
    [true, false],
  ],
  [
    'map values string → int',
    record([f('m', { type: 'map', values: 'string' })]),
    record([f('m', { type: 'map', values: 'int' })]),
    [false, false],
  ],
  [
    'fixed size changed',
    record([f('h', { type: 'fixed', name: 'Hash', size: 16 })]),
    record([f('h', { type: 'fixed', name: 'Hash', size: 32 })]),
    [false, false],
  ],
  ['record renamed without an alias', record([id], 'Order'), record([id], 'Purchase'), [false, false]],
];

const verdict = (old: unknown, next: unknown, level: Level) =>
  checkCompatibility({ format: 'avro', level, old: [old], next }).compatible;

for (const [name, old, next, [backward, forward]] of cases) {
  test(`avro: ${name}`, () => {
    assert.equal(verdict(old, next, 'BACKWARD'), backward, 'BACKWARD');
    assert.equal(verdict(old, next, 'FORWARD'), forward, 'FORWARD');
    assert.equal(verdict(old, next, 'FULL'), backward && forward, 'FULL');
    assert.equal(verdict(old, next, 'FULL_TRANSITIVE'), backward && forward, 'FULL_TRANSITIVE');
  });
}
