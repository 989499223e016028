// Issue 11 item 3: the `effectively-original-*` forwarding headers are the library's, and trusted only on a record
// that came from this group's own retry chain (a retry topic or the DLT of the topic the headers name). A record of
// the main topic that carries them (a handler re-emitting `event.headers`, or a hostile producer) is forwarded and
// kept at its own coordinates. Coordinates that do not parse become a typed dead letter, not a NaN insert retried for
// ever.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { originalOf, RetryHeaders, RetryTopics } from '../../src/consumer/retry-topics.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';

const chain = new RetryTopics(['orders'], { delaysMs: [100, 200] });

function record(topic: string, headers: Record<string, string>): IncomingRecord {
  const encoded: Record<string, Buffer> = { ce_id: Buffer.from('0190a6f0-0000-7000-8000-000000000001') };
  for (const [name, value] of Object.entries(headers)) encoded[name] = Buffer.from(value);
  return {
    topic,
    partition: 1,
    offset: '42',
    key: Buffer.from('k'),
    value: Buffer.from('{}'),
    headers: encoded,
    timestamp: 1000,
  };
}

const foreign = {
  [RetryHeaders.originalTopic]: 'payments',
  [RetryHeaders.originalPartition]: '7',
  [RetryHeaders.originalOffset]: '99',
  [RetryHeaders.originalTimestamp]: '5',
  [RetryHeaders.firstFailedAt]: '5',
  [RetryHeaders.group]: 'g',
  [RetryHeaders.attempt]: '2',
};

const text = (out: { headers?: Record<string, string | Buffer> }, name: string) => out.headers?.[name]?.toString();

test('retry forward: a main-topic record carrying effectively-original-* headers is forwarded with its own coordinates', () => {
  const out = chain.forward(record('orders', foreign), new Error('boom'), 1, 'g', false, 2000);
  assert.equal(out.topic, 'orders-retry-1');
  assert.equal(text(out, RetryHeaders.originalTopic), 'orders');
  assert.equal(text(out, RetryHeaders.originalPartition), '1');
  assert.equal(text(out, RetryHeaders.originalOffset), '42');
  assert.equal(text(out, RetryHeaders.firstFailedAt), '2000');
});

test("retry forward: a record of this group's own retry topic keeps its original coordinates (naive twin)", () => {
  const own = { ...foreign, [RetryHeaders.originalTopic]: 'orders' };
  const out = chain.forward(record('orders-retry-1', own), new Error('boom'), 2, 'g', false, 2000);
  assert.equal(out.topic, 'orders-retry-2');
  assert.equal(text(out, RetryHeaders.originalPartition), '7');
  assert.equal(text(out, RetryHeaders.originalOffset), '99');
  assert.equal(text(out, RetryHeaders.firstFailedAt), '5');
});

test("retry forward: another group's headers on a retry topic are not trusted", () => {
  const other = { ...foreign, [RetryHeaders.originalTopic]: 'orders', [RetryHeaders.group]: 'other' };
  const out = chain.forward(record('orders-retry-1', other), new Error('boom'), 2, 'g', false, 2000);
  assert.equal(text(out, RetryHeaders.originalTopic), 'orders-retry-1');
  assert.equal(text(out, RetryHeaders.originalOffset), '42');
});

test('retry originalOf: a main-topic record is kept at its own coordinates whatever headers it claims', () => {
  const { record: kept } = originalOf(record('orders', foreign));
  assert.deepEqual([kept.topic, kept.partition, kept.offset], ['orders', 1, '42']);
  assert.ok(!Object.keys(kept.headers).some((name) => name.startsWith('effectively-')));
});

test('retry originalOf: a DLT record names a topic other than its chain: not trusted', () => {
  const { record: kept } = originalOf(record('orders-dlt', foreign));
  assert.deepEqual([kept.topic, kept.partition, kept.offset], ['orders-dlt', 1, '42']);
});

test('retry originalOf: a DLT record of the chain is kept at its original coordinates (naive twin)', () => {
  const { record: kept, code } = originalOf(
    record('orders-dlt', { ...foreign, [RetryHeaders.originalTopic]: 'orders' }),
  );
  assert.deepEqual([kept.topic, kept.partition, kept.offset, kept.timestamp], ['orders', 7, '99', 5]);
  assert.equal(code, 'EFF_HANDLER_FAILED');
});

test('retry originalOf: a non-numeric original partition or offset becomes a typed dead letter at its own coordinates', () => {
  for (const [name, value] of [
    [RetryHeaders.originalPartition, 'abc'],
    [RetryHeaders.originalPartition, '-1'],
    [RetryHeaders.originalPartition, '1e3'],
    [RetryHeaders.originalOffset, '12x'],
    [RetryHeaders.originalOffset, ''],
  ] as const) {
    const headers = { ...foreign, [RetryHeaders.originalTopic]: 'orders', [name]: value };
    const original = originalOf(record('orders-dlt', headers));
    assert.equal(original.code, 'EFF_FORWARD_HEADERS_INVALID', `${name}=${value}`);
    assert.ok(Number.isSafeInteger(original.record.partition), `${name}=${value}`);
    assert.deepEqual(
      [original.record.topic, original.record.partition, original.record.offset],
      ['orders-dlt', 1, '42'],
    );
    assert.match(original.reason, /forwarding headers/);
  }
});
