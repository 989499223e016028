import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cutAfterOversized,
  kafkaDefaultMaxMessageBytes,
  recordBytes,
  topicLimits,
} from '../../src/outbox/topic-limits.ts';

const row = (key: string, size: number, topic = 't') => ({ topic, key, size });

test("a row that may be over its topic's limit ends the send when a later row of its key follows", () => {
  const limits = topicLimits(undefined);
  const big = kafkaDefaultMaxMessageBytes;
  assert.equal(cutAfterOversized([row('A', 10), row('K', big), row('B', 10), row('K', 10)], limits), 2);
  assert.equal(cutAfterOversized([row('A', 10), row('K', big), row('B', 10)], limits), undefined, 'no later K');
  assert.equal(cutAfterOversized([row('K', 10), row('K', 10)], limits), undefined, 'small rows travel together');
});

test('limits per topic, and lowered by a refusal for size', () => {
  const limits = topicLimits({ small: 100_000, '*': 16_000_000 });
  assert.ok(limits.mayBeOver(row('K', 300_000, 'small')));
  assert.ok(!limits.mayBeOver(row('K', 300_000, 'other')));
  limits.refusedForSize(row('K', 200_000, 'other'));
  assert.ok(limits.mayBeOver(row('L', 200_000, 'other')), 'a row as big as the refused one');
  assert.ok(!limits.mayBeOver(row('L', 100_000, 'other')));
});

test('the estimate counts the broker overhead, key and headers', () => {
  const bare = recordBytes({ topic: 't', key: '', size: 0 });
  assert.ok(bare > 61 + 36);
  assert.equal(recordBytes({ topic: 't', key: 'ab', size: 5, headers: { h: 'xyz' } }), bare + 2 + 5 + 10 + 1 + 3);
});

test('maxMessageBytes must be positive integers', () => {
  assert.throws(() => topicLimits(0), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => topicLimits({ t: 1.5 }), { code: 'EFF_INVALID_OPTIONS' });
});
