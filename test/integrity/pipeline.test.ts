// Kafka→Kafka exactly once under real faults (modelled on Kafka's own transactions system test): sequence-numbered
// inputs over 4 partitions, the pipeline child SIGKILLed at each crash point after 20 % of the work, or stopped past
// its session as a zombie. Each has a naive twin (produce, then commit offsets) that the same fault must break.
// Each exactly-once case runs twice: a transaction per partition batch, and windows of one transaction over several
// partitions' batches (`commitIntervalMs`, batches of 50 so that a window holds several): a kill after one
// partition's send while others' are in the window, after the window's offsets, during its commit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runHandover } from '../../scenarios/pipeline/handover.ts';
import { isPoison } from '../../scenarios/pipeline/records.ts';
import { crashPoints, resultLine, runPipeline } from '../../scenarios/pipeline/run.ts';
import { runZombie } from '../../scenarios/pipeline/zombie.ts';
import { needs } from '../support/services.ts';

const inputs = 3000;
const poison = Array.from({ length: inputs }, (_, seq) => seq).filter(isPoison).length;
const modes = [
  { mode: 'a transaction per batch', shape: {} },
  { mode: 'windows of 100 ms', shape: { commitIntervalMs: 100, maxBatchSize: 50 } },
];

for (const { mode, shape } of modes) {
  test(`${mode}: killed at after-send, after-send-offsets and during-commit: every input once, in order`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const result = await runPipeline({
      ...shape,
      inputs,
      partitions: 4,
      kills: 3,
      guarantee: 'exactly-once',
      timeoutMs: 120_000,
    });
    t.diagnostic(resultLine(result));
    for (const point of crashPoints) assert.equal(result.killsAt[point], 1, `killed once at ${point}`);
    assert.deepEqual(
      { outputs: result.outputs, duplicates: result.duplicates, lost: result.lost, outOfOrder: result.outOfOrder },
      { outputs: inputs, duplicates: 0, lost: 0, outOfOrder: 0 },
    );
    assert.equal(result.deadLettered, poison, 'each poison input on the dead-letter topic, once');
    assert.equal(result.misrouted, 0);
    assert.ok(result.offsetsAtEnd, "the group's committed offsets reached the inputs' end offsets");
    // Proof the kills hit open transactions: a read_uncommitted reader sees their aborted copies.
    assert.ok(result.abortedSeen > 0, `aborted copies seen: ${result.abortedSeen}`);
  });

  test(`${mode}: a zombie (stopped past its session, then continued) cannot commit; nothing doubled`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const result = await runZombie({
      ...shape,
      inputs: 2000,
      partitions: 4,
      guarantee: 'exactly-once',
      timeoutMs: 90_000,
    });
    assert.match(
      result.zombieFailure ?? '',
      /^failure:(aborted|recreated):ERR_(UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION|FENCED_INSTANCE_ID|PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|_FENCED):/,
    );
    assert.deepEqual([result.outputs, result.duplicates, result.lost], [2000, 0, 0]);
    assert.ok(result.abortedSeen > 0, "the zombie's open transaction was aborted (its copies seen read_uncommitted)");
    assert.ok(result.offsetsAtEnd);
  });

  test(`${mode}: an instance killed with offsets pending in its transaction, never back: the other one takes over, nothing doubled`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const result = await runHandover({
      ...shape,
      inputs: 2000,
      partitions: 4,
      guarantee: 'exactly-once',
      crashAt: 'pipeline:after-send-offsets',
      timeoutMs: 90_000,
    });
    t.diagnostic(`handover took ${result.handoverSeconds} s`);
    assert.ok(result.killed && result.offsetsAtEnd);
    assert.deepEqual([result.outputs, result.duplicates, result.lost, result.outOfOrder], [2000, 0, 0, 0]);
    assert.ok(result.abortedSeen > 0, "the dead instance's transaction was aborted by the broker");
  });
}

test('naive twin (produce, then commit offsets) under the same kills writes duplicates', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const result = await runPipeline({ inputs, partitions: 4, kills: 3, guarantee: 'at-least-once', timeoutMs: 90_000 });
  t.diagnostic(`naive: ${resultLine(result)}`);
  assert.equal(result.kills, 3);
  assert.equal(result.lost, 0);
  assert.ok(result.duplicates > 0, `expected duplicates, got ${result.duplicates}`);
});

test('naive twin: the same zombie without transactions leaves its outputs doubled', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const result = await runZombie({ inputs: 2000, partitions: 4, guarantee: 'at-least-once', timeoutMs: 60_000 });
  assert.equal(result.lost, 0);
  assert.ok(result.duplicates > 0, `expected duplicates, got ${result.duplicates}`);
});
