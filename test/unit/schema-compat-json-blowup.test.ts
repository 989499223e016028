// Issue 11 item 6: the JSON Schema compatibility check re-explored anyOf branches without memory: a 1.3 KB schema of
// nested anyOf through `$ref` took seconds of synchronous CPU and produced a million violations, reachable through
// the registry server. Each (writer, reader) pair is now compared once per path, union trials are remembered, and a
// work budget ends a comparison that is still too large with a violation (refused, never a frozen event loop).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkCompatibility } from '../../src/schema/compat/index.ts';

/** `a0` = anyOf[a1, a1], `a1` = anyOf[a2, a2], … `a<depth>` = leaf: 2^depth paths through a few hundred bytes. */
function nested(depth: number, leaf: Record<string, unknown>) {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++)
    $defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  $defs[`a${depth}`] = leaf;
  return { $defs, $ref: '#/$defs/a0' };
}

test('json compat blow-up: a writer of nested anyOf is compared once per pair: a handful of violations, not 2^depth', () => {
  const old = nested(16, { type: 'string' });
  assert.ok(JSON.stringify(old).length < 2000);
  const result = checkCompatibility({ format: 'json', level: 'BACKWARD', old: [old], next: { type: 'integer' } });
  assert.equal(result.compatible, false, 'the naive twin: the change is still found');
  assert.ok(result.violations.length <= 3, `${result.violations.length} violations`);
});

test('json compat blow-up: a reader of nested anyOf is tried once per branch pair', { timeout: 60_000 }, () => {
  const next = nested(40, { type: 'integer' });
  const result = checkCompatibility({ format: 'json', level: 'BACKWARD', old: [{ type: 'string' }], next });
  assert.equal(result.compatible, false);
  assert.ok(result.violations.length <= 3, `${result.violations.length} violations`);
  // naive twin: the same nesting with a leaf that fits is compatible
  const fits = nested(40, { type: 'string' });
  assert.equal(
    checkCompatibility({ format: 'json', level: 'BACKWARD', old: [{ type: 'string' }], next: fits }).compatible,
    true,
  );
});

test('json compat blow-up: a comparison past the work budget is refused with a violation, not run for ever', () => {
  // wide and distinct: 300 properties × 300 reader branches each is past any sensible budget
  const properties = (type: string) =>
    Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [
        `p${i}`,
        { anyOf: Array.from({ length: 300 }, (_, j) => ({ type, minLength: j })) },
      ]),
    );
  const old = { type: 'object', properties: properties('string') };
  const next = { type: 'object', properties: properties('integer') };
  const result = checkCompatibility({ format: 'json', level: 'BACKWARD', old: [old], next });
  assert.equal(result.compatible, false);
  assert.ok(
    result.violations.some((v) => v.rule === 'too-complex'),
    JSON.stringify(result.violations.slice(0, 2)),
  );
});
