// JSON Schema keywords beyond types and properties, table-driven: each pair (old → new) with its verdict at BACKWARD
// and FORWARD (FULL is both). Our own cases, one or more per rule family of the schema registry's JSON Schema diff:
// allOf/anyOf/oneOf moves, open, closed and partially open content models of objects and arrays, `not`,
// `dependencies`, `contains`, `required`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCompatibility, type Level } from '../../src/schema/compat/index.ts';

type Verdicts = [backward: boolean, forward: boolean];
const str = { type: 'string' };
const num = { type: 'number' };
const int = { type: 'integer' };
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});
const tuple = (items: unknown[], additionalItems?: unknown) => ({
  type: 'array',
  items,
  ...(additionalItems === undefined ? {} : { additionalItems }),
});

const cases: [name: string, old: unknown, next: unknown, verdicts: Verdicts][] = [
  // allOf, anyOf, oneOf
  ['allOf parts reordered', { allOf: [str, { maxLength: 5 }] }, { allOf: [{ maxLength: 5 }, str] }, [true, true]],
  ['allOf part dropped (wider)', { allOf: [{ enum: ['a', 'b'] }, str] }, { allOf: [str] }, [true, false]],
  [
    'allOf enum widened',
    { allOf: [str, { enum: ['red'] }] },
    { allOf: [{ enum: ['red', 'blue'] }, str] },
    [true, false],
  ],
  ['allOf part added (narrower)', { allOf: [str] }, { allOf: [str, { maxLength: 3 }] }, [false, true]],
  ['plain → allOf of the same', str, { allOf: [str] }, [true, true]],
  ['allOf → anyOf with more branches', { allOf: [str] }, { anyOf: [num, str] }, [true, false]],
  ['oneOf of one → allOf of it', { oneOf: [str] }, { allOf: [str] }, [true, true]],
  ['allOf → oneOf missing its type', { allOf: [num] }, { oneOf: [str] }, [false, false]],
  // not
  ['not narrowed (number → integer refuses less)', { not: num }, { not: int }, [true, false]],
  ['not added, disjoint from the type', str, { type: 'string', not: num }, [true, true]],
  ['not added over the type', str, { type: 'string', not: { maxLength: 2 } }, [false, true]],
  // objects: closed, open, partially open (patternProperties, unevaluatedProperties)
  [
    'property moved under a pattern of a closed model',
    obj({ a: str, I_1: int }, { additionalProperties: false }),
    obj({ a: str }, { additionalProperties: false, patternProperties: { '^I_': num } }),
    [true, false],
  ],
  [
    'pattern narrowed',
    obj({}, { patternProperties: { '^S_': str } }),
    obj({}, { patternProperties: { '^S_': { type: 'string', maxLength: 2 } } }),
    [false, true],
  ],
  ['pattern added to an open model', obj({}), obj({}, { patternProperties: { '^n_': num } }), [false, true]],
  [
    'property that was false dropped from a closed model',
    obj({ x: false }, { additionalProperties: false }),
    obj({}, { additionalProperties: false }),
    [true, true],
  ],
  [
    'property added under unevaluatedProperties false',
    obj({ a: str }, { unevaluatedProperties: false }),
    obj({ a: str, b: num }, { unevaluatedProperties: false }),
    [true, false],
  ],
  [
    'a new pattern overlapping an old one',
    obj({}, { patternProperties: { '^a': {} } }),
    obj({}, { patternProperties: { '^a': {}, '^ab': num } }),
    [false, true],
  ],
  [
    'unevaluatedProperties beside allOf: not compared, reported',
    { allOf: [obj({ a: str })], unevaluatedProperties: false },
    { allOf: [obj({ a: str })], unevaluatedProperties: true },
    [false, false],
  ],
  // arrays: tuple positions, additionalItems, contains
  ['contains added to a closed tuple', tuple([num], false), { ...tuple([num], false), contains: str }, [false, true]],
  ['tuple → any array', tuple([str, num]), { type: 'array' }, [true, false]],
  ['position added to a closed tuple', tuple([str], false), tuple([str, num], false), [true, false]],
  ['position removed, covered by additionalItems', tuple([str, num], false), tuple([str], num), [true, false]],
  ['position type changed', tuple([str, num]), tuple([str, str]), [false, false]],
  [
    'additionalItems narrowed (no tuple: read as items)',
    { additionalItems: true },
    { additionalItems: false },
    [false, true],
  ],
  [
    'minContains lowered',
    { type: 'array', contains: num, minContains: 2 },
    { type: 'array', contains: num, minContains: 1 },
    [true, false],
  ],
  ['contains added', { type: 'array' }, { type: 'array', contains: num }, [false, true]],
  // dependencies
  ['dependency schema removed', { dependencies: { a: str, b: str } }, { dependencies: { a: str } }, [true, false]],
  [
    'dependentRequired added',
    obj({ a: str, b: str }),
    obj({ a: str, b: str }, { dependentRequired: { a: ['b'] } }),
    [false, true],
  ],
  // required: the registry accepts this one, we do not (docs/schema-evolution.md)
  [
    'required switched to a property old data lacks',
    obj({ foo: str }, { required: ['foo'] }),
    obj({ foo: str }, { required: ['bar'] }),
    [false, false],
  ],
];

const verdict = (old: unknown, next: unknown, level: Level) =>
  checkCompatibility({ format: 'json', level, old: [old], next }).compatible;

for (const [name, old, next, [backward, forward]] of cases) {
  test(`json: ${name}`, () => {
    assert.equal(verdict(old, next, 'BACKWARD'), backward, 'BACKWARD');
    assert.equal(verdict(old, next, 'FORWARD'), forward, 'FORWARD');
    assert.equal(verdict(old, next, 'FULL'), backward && forward, 'FULL');
  });
}
