// What the partition worker remembers per partition between its batches: attempts, records given up on (passed over
// when they come again), the dead-letter lookup of an assignment, and what a revoke forgets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PausedRetries } from '../../src/consumer/paused-retries.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';

const tp = { topic: 't', partition: 0 };
const record = (offset: number, id = `id-${offset}`): IncomingRecord => ({
  ...tp,
  offset: String(offset),
  key: null,
  value: null,
  headers: { id: Buffer.from(id) },
  timestamp: 0,
});
const keyOf = (r: IncomingRecord) => r.headers.id?.toString() ?? null;

test('dead letters found at an assignment are passed over only when the record carries the same event', () => {
  const retries = new PausedRetries(keyOf);
  assert.equal(retries.needsLookup(tp), true);
  retries.lookedUp(
    tp,
    new Map([
      ['1', 'id-1'],
      ['2', 'another-event'],
    ]),
  );
  assert.equal(retries.needsLookup(tp), false);
  const batch = [record(0), record(1), record(2), record(3)];
  assert.deepEqual([...retries.givenUpIn(batch)], ['1']);
  // The mismatching one is dropped for good; the match stays while the partition has not moved past it.
  assert.deepEqual([...retries.givenUpIn(batch)], ['1']);
  assert.deepEqual([...retries.givenUpIn([record(2), record(3)])], []);
});

test('a record given up on here is passed over whatever it carries, until the partition moves past it', () => {
  const retries = new PausedRetries(() => null);
  retries.givenUp(record(5));
  assert.deepEqual([...retries.givenUpIn([record(4), record(5), record(6)])], ['5']);
  assert.deepEqual([...retries.givenUpIn([record(6)])], []);
  assert.deepEqual([...retries.givenUpIn([record(5)])], [], 'forgotten once the position passed it');
});

test('a revoke forgets the attempts, the records given up on and the lookup; no timer of it resumes', async () => {
  const retries = new PausedRetries(keyOf);
  retries.lookedUp(tp, new Map());
  retries.givenUp(record(3));
  assert.equal(retries.failed(record(1)).attempts, 1);
  assert.equal(retries.failed(record(1)).attempts, 2);
  let resumed = 0;
  retries.resumeLater(tp, 20, () => {
    resumed += 1;
  });
  retries.forget([tp]);
  assert.equal(retries.needsLookup(tp), true, 'looked up again at the next assignment');
  assert.deepEqual([...retries.givenUpIn([record(3)])], []);
  assert.equal(retries.failed(record(1)).attempts, 1, 'attempts start again');
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(resumed, 0);
  retries.close();
});
