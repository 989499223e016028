// One Kafka transaction over the batches of several partitions (`commitIntervalMs`, issue 34 item 2) under the same
// faults as a transaction per batch: the pipeline child SIGKILLed after one partition's send while others' are in the
// window, after the window's offsets were sent, and during its commit. The naive twin (produce, then commit offsets)
// under the same kills doubles outputs (test/integrity/pipeline.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runHandover } from '../../scenarios/pipeline/handover.ts';
import { isPoison } from '../../scenarios/pipeline/records.ts';
import { crashPoints, resultLine, runPipeline } from '../../scenarios/pipeline/run.ts';
import { runZombie } from '../../scenarios/pipeline/zombie.ts';
import { needs } from '../support/services.ts';

const inputs = 3000;
const poison = Array.from({ length: inputs }, (_, seq) => seq).filter(isPoison).length;
const shape = { inputs, partitions: 4, kills: 3, timeoutMs: 120_000, commitIntervalMs: 100, maxBatchSize: 50 };

test('windows of 100 ms over 4 partitions, killed at each crash point: every input once, in order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const result = await runPipeline({ ...shape, guarantee: 'exactly-once' });
  t.diagnostic(resultLine(result));
  for (const point of crashPoints) assert.equal(result.killsAt[point], 1, `killed once at ${point}`);
  assert.deepEqual(
    { outputs: result.outputs, duplicates: result.duplicates, lost: result.lost, outOfOrder: result.outOfOrder },
    { outputs: inputs, duplicates: 0, lost: 0, outOfOrder: 0 },
  );
  assert.equal(result.deadLettered, poison, 'each poison input on the dead-letter topic, once');
  assert.equal(result.misrouted, 0);
  assert.ok(result.offsetsAtEnd, "the group's committed offsets reached the inputs' end offsets");
  assert.ok(result.abortedSeen > 0, `aborted copies seen: ${result.abortedSeen}`);
});

test('naive twin: the same kills at-least-once write duplicates', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const result = await runPipeline({ ...shape, guarantee: 'at-least-once' });
  t.diagnostic(`naive: ${resultLine(result)}`);
  assert.equal(result.kills, 3);
  assert.equal(result.lost, 0);
  assert.ok(result.duplicates > 0, `expected duplicates, got ${result.duplicates}`);
});

test('windows: a zombie (stopped past its session after a send, then continued) cannot commit; nothing doubled', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const result = await runZombie({
    inputs: 2000,
    partitions: 4,
    guarantee: 'exactly-once',
    timeoutMs: 90_000,
    commitIntervalMs: 100,
    maxBatchSize: 50,
  });
  assert.match(
    result.zombieFailure ?? '',
    /^failure:(aborted|recreated):ERR_(UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION|FENCED_INSTANCE_ID|PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|_FENCED):/,
  );
  assert.deepEqual([result.outputs, result.duplicates, result.lost], [2000, 0, 0]);
  assert.ok(result.offsetsAtEnd);
});

test('windows: an instance killed with the offsets of a window pending, never back: the other takes over, nothing doubled', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const result = await runHandover({
    inputs: 2000,
    partitions: 4,
    guarantee: 'exactly-once',
    crashAt: 'pipeline:after-send-offsets',
    timeoutMs: 90_000,
    commitIntervalMs: 100,
    maxBatchSize: 50,
  });
  assert.ok(result.killed && result.offsetsAtEnd);
  assert.deepEqual([result.outputs, result.duplicates, result.lost, result.outOfOrder], [2000, 0, 0, 0]);
  assert.ok(result.abortedSeen > 0, "the dead instance's transaction was aborted by the broker");
});
