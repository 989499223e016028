import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertIdentifier } from '../../src/db/identifiers.ts';
import { isTransientDbError } from '../../src/db/sqlstate.ts';
import { fullJitter } from '../../src/observability/sleep.ts';
import { shardOf } from '../../src/outbox/shard.ts';

test('full jitter stays within [0, min(cap, base * 2^(attempt-1))]', () => {
  assert.equal(
    fullJitter(1, 500, 10_000, () => 1),
    500,
  );
  assert.equal(
    fullJitter(3, 500, 10_000, () => 1),
    2000,
  );
  assert.equal(
    fullJitter(20, 500, 10_000, () => 1),
    10_000,
  );
  assert.equal(
    fullJitter(5, 500, 10_000, () => 0),
    0,
  );
});

test('database errors are classified by SQLSTATE', () => {
  assert.equal(isTransientDbError({ code: '40001' }), true);
  assert.equal(isTransientDbError({ code: '57P01' }), true);
  assert.equal(isTransientDbError({ code: '08006' }), true);
  assert.equal(isTransientDbError({ code: 'ECONNRESET' }), true);
  assert.equal(isTransientDbError({ code: '23505' }), false);
  assert.equal(isTransientDbError({ code: '42P01' }), false);
  assert.equal(isTransientDbError(new Error('Connection terminated')), false);
});

test('a key always lands on the same shard, and keys spread over the shards', () => {
  assert.equal(shardOf('order-42', 16), shardOf('order-42', 16));
  const used = new Set(Array.from({ length: 400 }, (_, i) => shardOf(`order-${i}`, 16)));
  assert.equal(used.size, 16);
});

test('identifiers spliced into SQL are validated', () => {
  assert.equal(assertIdentifier('effectively'), 'effectively');
  for (const bad of ['Effectively', 'a;drop table x', '1abc', 'a-b', '']) {
    assert.throws(() => assertIdentifier(bad), { code: 'EFF_INVALID_IDENTIFIER' });
  }
});
