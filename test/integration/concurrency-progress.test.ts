// The batch position when records finish out of offset order (src/consumer/progress.ts) and the lanes of a batch
// (src/consumer/lanes.ts): pure, no services.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Decoded } from '../../src/consumer/apply.ts';
import { lanesOf, resolveConcurrency, runLanes } from '../../src/consumer/lanes.ts';
import { Progress } from '../../src/consumer/progress.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';

const rec = (offset: number, key: string | null = null): IncomingRecord => ({
  topic: 't',
  partition: 0,
  offset: String(offset),
  key: key === null ? null : Buffer.from(key),
  value: null,
  headers: {},
  timestamp: 0,
});

test('the position is the lowest unfinished record, whatever order the records finish in', () => {
  const records = [rec(10), rec(11), rec(13), rec(14)]; // 12: another group's record, not tracked
  const advances: [string, string][] = [];
  const progress = new Progress({ topic: 't', partition: 0 }, records, (through, position) =>
    advances.push([through, position.offset]),
  );
  assert.equal(progress.positionWith([records[2]!, records[3]!]).offset, '10', 'a gap at 10 holds the position');
  progress.finished([records[2]!, records[3]!]);
  assert.deepEqual(advances, [], 'nothing resolved while 10 is unfinished');
  assert.equal(progress.positionWith([records[0]!]).offset, '11');
  progress.finished([records[0]!]);
  assert.deepEqual(advances, [['10', '11']]);
  progress.finished([records[1]!]);
  assert.deepEqual(advances.at(-1), ['14', '15'], 'past the untracked 12 and the finished 13, 14');
});

test('lanes: one per key in key mode, records of a key in offset order; one lane in partition mode', () => {
  const items = [rec(0, 'a'), rec(1, 'b'), rec(2, 'a'), rec(3, null), rec(4, null)].map(
    (record) => ({ record, event: {} }) as unknown as Decoded,
  );
  const offsets = (lanes: Decoded[][]) => lanes.map((lane) => lane.map((item) => item.record.offset));
  assert.deepEqual(offsets(lanesOf(items, 'key')), [['0', '2'], ['1'], ['3', '4']]);
  assert.deepEqual(offsets(lanesOf(items, 'partition')), [['0', '1', '2', '3', '4']]);
});

test('runLanes keeps at most max lanes in flight and waits for all of them even when one throws', async () => {
  const lanes = Array.from({ length: 6 }, (_, n) => [{ record: rec(n, `k${n}`) } as unknown as Decoded]);
  let inFlight = 0;
  let most = 0;
  let ended = 0;
  const run = runLanes(lanes, 2, async (lane) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    inFlight -= 1;
    ended += 1;
    if (lane[0]!.record.offset === '1') throw new Error('lane 1');
    return lane[0]!.record.offset !== '3';
  });
  await assert.rejects(run, /lane 1/);
  assert.equal(most, 2);
  assert.equal(ended, 6, 'every lane ended before the batch returned');
});

test('concurrency options are checked', () => {
  assert.deepEqual(resolveConcurrency(undefined), { mode: 'partition', max: 16, partitions: 1 });
  assert.throws(() => resolveConcurrency({ mode: 'key', partitions: 1.5 }), /concurrency.partitions/);
  assert.throws(() => resolveConcurrency({ mode: 'keys' as never }), /EFF_INVALID_OPTIONS|concurrency.mode/);
  assert.throws(() => resolveConcurrency({ mode: 'key', max: 0 }), /concurrency.max/);
});
