import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEvent, encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { isUuid, uuidv7 } from '../../src/envelope/uuidv7.ts';
import { EffectivelyError } from '../../src/errors.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';

function asIncoming(record: ReturnType<typeof encodeEvent>): IncomingRecord {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(record.headers)) headers[name] = Buffer.from(value);
  return {
    topic: record.topic,
    partition: 0,
    offset: '7',
    key: record.key === null ? null : Buffer.from(record.key),
    value: record.value,
    headers,
    timestamp: Date.now(),
  };
}

test('uuidv7 ids are version 7, unique, and sort in creation order', () => {
  const ids = Array.from({ length: 5000 }, () => uuidv7());
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
  for (const id of ids.slice(0, 10)) {
    assert.ok(isUuid(id));
    assert.equal(id[14], '7');
    assert.ok('89ab'.includes(id[19]!));
  }
});

test('an event round-trips through the CloudEvents Kafka binary mode with its id unchanged', () => {
  const event = createEvent({
    topic: 'orders',
    type: 'boxoffice.order.confirmed',
    source: '/boxoffice/orders',
    key: 'order-1',
    version: 3,
    data: { total: 120, seats: ['A1', 'A2'] },
    headers: { traceparent: '00-abc-def-01' },
  });
  const record = encodeEvent(event);
  assert.equal(record.headers.ce_specversion, '1.0');
  assert.equal(record.headers.ce_id, event.id);
  assert.equal(record.key, 'order-1');
  const decoded = decodeEvent(asIncoming(record));
  assert.deepEqual(decoded, event);
});

test('the binary mode writes only the headers the event needs: no ce_partitionkey, the record key says it', () => {
  const event = createEvent({ topic: 'orders', type: 'order.confirmed', source: '/orders', key: 'order-9', data: 1 });
  const record = encodeEvent(event);
  // Every header costs the Kafka client a native conversion per record on read (docs/kafka.md).
  assert.deepEqual(Object.keys(record.headers).sort(), [
    'ce_id',
    'ce_source',
    'ce_specversion',
    'ce_time',
    'ce_type',
    'content-type',
  ]);
  assert.equal(record.key, 'order-9');
  assert.equal(decodeEvent(asIncoming(record)).key, 'order-9');
  const versioned = encodeEvent(
    createEvent({ topic: 'orders', type: 't', source: '/s', key: 'k', version: 2, data: null }),
  );
  assert.equal(versioned.headers.ce_version, '2');
});

test("another producer's record without a key still takes its key from ce_partitionkey (naive twin: without it, none)", () => {
  const event = createEvent({ topic: 'orders', type: 'order.confirmed', source: '/orders', key: 'order-9', data: 1 });
  const incoming = { ...asIncoming(encodeEvent(event)), key: null };
  const withExtension = { ...incoming, headers: { ...incoming.headers, ce_partitionkey: Buffer.from('order-9') } };
  assert.equal(decodeEvent(withExtension).key, 'order-9');
  // The naive twin: the same record without the extension has no key to give; the test above can see the difference.
  assert.equal(decodeEvent(incoming).key, '');
});

test('records that are not valid events fail with stable codes, never a crash', () => {
  const good = asIncoming(encodeEvent(createEvent({ topic: 't', type: 'x', source: '/s', key: 'k', data: { a: 1 } })));
  const cases: [string, IncomingRecord, string][] = [
    ['no id', { ...good, headers: { ...good.headers, ce_id: Buffer.alloc(0) } }, 'EFF_MISSING_EVENT_ID'],
    ['id not UTF-8', { ...good, headers: { ...good.headers, ce_id: Buffer.from([0xff]) } }, 'EFF_INVALID_EVENT'],
    ['malformed JSON', { ...good, value: Buffer.from('{"a":') }, 'EFF_DECODE_FAILED'],
    ['invalid UTF-8', { ...good, value: Buffer.from([0x22, 0xff, 0xfe, 0x22]) }, 'EFF_DECODE_FAILED'],
    ['bad version', { ...good, headers: { ...good.headers, ce_version: Buffer.from('v2') } }, 'EFF_INVALID_EVENT'],
  ];
  for (const [name, record, code] of cases) {
    assert.throws(
      () => decodeEvent(record),
      (error: unknown) => error instanceof EffectivelyError && error.code === code && !error.retryable,
      name,
    );
  }
  const { ce_id: _dropped, ...withoutId } = good.headers;
  assert.throws(() => decodeEvent({ ...good, headers: withoutId }), { code: 'EFF_MISSING_EVENT_ID' });
});

test('createEvent refuses missing fields and a non-integer version', () => {
  assert.throws(() => createEvent({ topic: 't', type: '', source: '/s', key: 'k', data: null }), {
    code: 'EFF_INVALID_EVENT',
  });
  assert.throws(() => createEvent({ topic: 't', type: 'x', source: '/s', key: 'k', data: null, version: 1.5 }), {
    code: 'EFF_INVALID_EVENT',
  });
});
