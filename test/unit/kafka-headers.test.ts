// The client hands a header name repeated in one record as an array of its values: the port keeps the last, as Kafka's
// Java client reads it (`lastHeader`); earlier the first was kept, so a retry or dead-letter copy carried another value
// than a Java consumer of the same record sees. The conversion hands the client's own object on when it needs no change
// (issue 36: no copy per record); these pin that it reads exactly as the copying conversion did.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeHeaders, recordsOf } from '../../src/transport/kafka/headers.ts';

const text = (headers: Record<string, Buffer>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value.toString('utf8')]));

test('a repeated header name keeps its last value; strings become bytes; undefined is dropped', () => {
  const headers = normalizeHeaders({
    a: [Buffer.from('first'), Buffer.from('second')],
    b: 'text',
    c: undefined,
    d: [Buffer.from('only')],
  });
  assert.deepEqual(text(headers), { a: 'second', b: 'text', d: 'only' });
  assert.ok(Buffer.isBuffer(headers.b));
  assert.deepEqual(Object.keys(headers), ['a', 'b', 'd']);
});

test('one Buffer per name: the same names, order and bytes; no headers at all is an empty object', () => {
  const given = { ce_id: Buffer.from('1'), ce_type: Buffer.from('t'), 'content-type': Buffer.from('application/json') };
  const headers = normalizeHeaders(given);
  assert.deepEqual(Object.keys(headers), ['ce_id', 'ce_type', 'content-type']);
  assert.deepEqual(text(headers), { ce_id: '1', ce_type: 't', 'content-type': 'application/json' });
  assert.ok(Object.values(headers).every((value) => Buffer.isBuffer(value)));
  assert.deepEqual(normalizeHeaders(undefined), {});
  assert.deepEqual(normalizeHeaders({}), {});
});

test('a mix of Buffers and one repeated name: every name read as the copying conversion read it', () => {
  const headers = normalizeHeaders({
    a: Buffer.from('x'),
    b: [Buffer.from('1'), Buffer.from('2')],
    c: Buffer.from('y'),
  });
  assert.deepEqual(text(headers), { a: 'x', b: '2', c: 'y' });
});

test('a header named __proto__ (which set the client object prototype) is not read, and lends no names', () => {
  // the client builds its object with `headers[key] = value`: for this name that sets the prototype
  const given: Record<string, Buffer> = {};
  given.__proto__ = Buffer.from('proto');
  given.ce_id = Buffer.from('1');
  const headers = normalizeHeaders(given);
  assert.equal(Object.getPrototypeOf(headers), Object.prototype);
  assert.deepEqual(text(headers), { ce_id: '1' });
  assert.equal((headers as Record<string, unknown>).length, undefined);
});

test('recordsOf: each message as the port record, in order, with the batch topic and partition', () => {
  const records = recordsOf({
    topic: 'orders',
    partition: 3,
    messages: [
      {
        offset: '7',
        key: Buffer.from('k'),
        value: Buffer.from('v'),
        headers: { h: Buffer.from('1') },
        timestamp: '1000',
      },
      { offset: '8', value: null, timestamp: '1001' },
    ],
  });
  assert.equal(records.length, 2);
  assert.deepEqual(
    records.map(({ topic, partition, offset, key, value, timestamp }) => ({
      topic,
      partition,
      offset,
      key: key?.toString(),
      value: value?.toString(),
      timestamp,
    })),
    [
      { topic: 'orders', partition: 3, offset: '7', key: 'k', value: 'v', timestamp: 1000 },
      { topic: 'orders', partition: 3, offset: '8', key: undefined, value: undefined, timestamp: 1001 },
    ],
  );
  assert.deepEqual(text(records[0]!.headers), { h: '1' });
  assert.deepEqual(records[1]!.headers, {});
  assert.equal(records[1]!.key, null);
});
