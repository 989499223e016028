// The pure-JavaScript transport's conversion of fetched batches: offsets, headers, control batches, the next position.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type PlatformaticTransportOptions,
  validatePlatformaticOptions,
} from '../../src/transport/platformatic/options.ts';
import { type FetchedBatch, recordsFrom } from '../../src/transport/platformatic/records.ts';

const b = (text: string) => Buffer.from(text);
const record = (offsetDelta: number, headers: [Buffer | null, Buffer | null][] = []) => ({
  offsetDelta,
  timestampDelta: BigInt(offsetDelta),
  key: b(`k${offsetDelta}`),
  value: b(`v${offsetDelta}`),
  headers,
});
const batch = (firstOffset: bigint, count: number, attributes = 0): FetchedBatch => ({
  firstOffset,
  lastOffsetDelta: count - 1,
  firstTimestamp: 1000n,
  attributes,
  records: Array.from({ length: count }, (_, n) => record(n)),
});

test('records from the offset asked for on; the next position is past every batch, control markers included', () => {
  const control = { ...batch(13n, 1, 0b100000), records: [record(0)] };
  const { records, next } = recordsFrom('t', 2, [batch(8n, 5), control], 10n);
  assert.deepEqual(
    records.map((r) => r.offset),
    ['10', '11', '12'],
  );
  assert.equal(next, 14n);
  assert.deepEqual(records[0], {
    topic: 't',
    partition: 2,
    offset: '10',
    key: b('k2'),
    value: b('v2'),
    headers: {},
    timestamp: 1002,
  });
});

test('headers: names as text, the last of a repeated name, a null value as empty bytes, __proto__ a header', () => {
  const one = {
    ...batch(0n, 1),
    records: [
      record(0, [
        [b('ce_id'), b('1')],
        [b('ce_id'), b('2')],
        [b('empty'), null],
        [b('__proto__'), b('x')],
        [null, b('nameless')],
      ]),
    ],
  };
  const [only] = recordsFrom('t', 0, [one], 0n).records;
  assert.deepEqual(Object.keys(only!.headers), ['ce_id', 'empty', '__proto__']);
  assert.deepEqual(only!.headers.ce_id, b('2'));
  assert.deepEqual(only!.headers.empty, Buffer.alloc(0));
  assert.deepEqual(only!.headers.__proto__, b('x'));
  assert.equal(Object.getPrototypeOf(only!.headers), Object.prototype);
});

test('invalid options name their field', () => {
  const cases: [PlatformaticTransportOptions, string][] = [
    [{ replicationFactor: 0 }, 'replicationFactor'],
    [{ commitIntervalMs: -1 }, 'commitIntervalMs'],
    [{ brokers: [''] }, 'brokers'],
  ];
  for (const [options, field] of cases) {
    assert.throws(
      () => validatePlatformaticOptions(options),
      (error: { code?: string; details?: { field?: string } }) =>
        error.code === 'EFF_INVALID_OPTIONS' && error.details?.field === field,
    );
  }
});
