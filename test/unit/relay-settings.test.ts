// Both relays, the poller and the WAL reader, check the options they share in one place: the same bad value is
// refused by either with EFF_INVALID_OPTIONS naming the field, before anything is opened.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { RelayOptions } from '../../src/outbox/relay-options.ts';
import type { Producer } from '../../src/transport/port.ts';

// Never reached: the options are refused first.
const db = {} as Db;
const producer = {} as Producer;

test('the poller and the WAL relay refuse the same bad shared options, naming the field', () => {
  const bad: [Partial<RelayOptions>, string][] = [
    [{ shards: 0 }, 'shards'],
    [{ shards: 2000 }, 'shards'],
    [{ batchSize: 0 }, 'batchSize'],
    [{ batchBytes: -1 }, 'batchBytes'],
    [{ errorBackoffMs: Number.NaN }, 'errorBackoffMs'],
    [{ errorBackoffMs: -5 }, 'errorBackoffMs'],
  ];
  for (const source of ['poll', 'wal'] as const)
    for (const [options, field] of bad)
      assert.throws(
        () => createRelay({ db, producer, source, ...options }),
        { code: 'EFF_INVALID_OPTIONS', details: { field } },
        `${source} ${JSON.stringify(options)}`,
      );
});
