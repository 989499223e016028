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
  const batch = [record(0), record(1), record(2), record(3)];
  assert.equal(retries.lookupFrom(tp, batch), '0', 'the first batch since the assignment looks up from its start');
  retries.lookedUp(
    tp,
    new Map([
      ['1', 'id-1'],
      ['2', 'another-event'],
    ]),
  );
  assert.equal(retries.lookupFrom(tp, batch), undefined);
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

test('a revoke forgets the attempts, the records given up on and the lookup; its pending resume still comes', async () => {
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
  assert.equal(retries.lookupFrom(tp, [record(3)]), '3', 'looked up again at the next assignment');
  assert.deepEqual([...retries.givenUpIn([record(3)])], []);
  assert.equal(retries.failed(record(1)).attempts, 1, 'attempts start again');
  // The client keeps a partition's pause across an unassignment and a later assignment: the timer resumes it.
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(resumed, 1);
  retries.close();
});

test('the end of an assignment forgets a stop and names the partition to resume', () => {
  const retries = new PausedRetries(keyOf);
  retries.stop(tp);
  assert.equal(retries.isStopped(tp), true);
  assert.deepEqual(retries.forget([tp]), [{ topic: tp.topic, partition: tp.partition }]);
  assert.equal(retries.isStopped(tp), false, 'a later assignment starts unstopped');
  assert.deepEqual(retries.forget([tp]), [], 'nothing left to resume');
  retries.close();
});

test('a full page of dead letters is continued once a batch goes past its last offset', () => {
  const retries = new PausedRetries(keyOf);
  retries.lookedUp(
    tp,
    new Map([
      ['2', 'id-2'],
      ['5', 'id-5'],
    ]),
    false,
  );
  assert.equal(retries.lookupFrom(tp, [record(0), record(5)]), undefined, 'within the page');
  assert.equal(retries.lookupFrom(tp, [record(4), record(8)]), '6', 'past the page: from the offset after its last');
  assert.equal(retries.lookupFrom(tp, [record(9), record(12)]), '9', 'never below the batch');
  retries.lookedUp(tp, new Map([['7', 'id-7']]), true);
  assert.equal(retries.lookupFrom(tp, [record(9), record(1000)]), undefined, 'complete');
  assert.deepEqual([...retries.givenUpIn([record(5), record(6), record(7)])], ['5', '7']);
});

test('a backoff longer than a timer can hold (2^31-1 ms) is clamped, never fired at once', async () => {
  const retries = new PausedRetries(keyOf);
  let resumed = 0;
  retries.resumeLater(tp, 2 ** 31 + 1000, () => {
    resumed += 1;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(resumed, 0, 'Node fires an overflowing timer after 1 ms: a pause/resume loop');
  retries.close();
});
