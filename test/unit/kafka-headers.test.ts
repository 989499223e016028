// The client hands a header name repeated in one record as an array of its values: the port keeps the last, as Kafka's
// Java client reads it (`lastHeader`); earlier the first was kept, so a retry or dead-letter copy carried another value
// than a Java consumer of the same record sees.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeHeaders } from '../../src/transport/kafka/headers.ts';

test('a repeated header name keeps its last value; strings become bytes; undefined is dropped', () => {
  const headers = normalizeHeaders({
    a: [Buffer.from('first'), Buffer.from('second')],
    b: 'text',
    c: undefined,
    d: [Buffer.from('only')],
  });
  assert.deepEqual(Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value.toString('utf8')])), {
    a: 'second',
    b: 'text',
    d: 'only',
  });
  assert.ok(Buffer.isBuffer(headers.b));
});
