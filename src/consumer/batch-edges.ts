import type { Batch, BatchControl } from '../transport/port.ts';
import type { PartitionWorkerContext } from './partition-worker.ts';
import type { Progress } from './progress.ts';
import { attemptsOf, groupOf, originalOf } from './retry-topics.ts';

/** How long a partition waits before its dead letters are looked up again after a failure that is not an outage. */
const LOOKUP_RETRY_MS = 1000;

/**
 * Before the first batch since the partition was assigned (and past each full page): the group's dead letters from
 * where the batch starts. Records given up on whose offset commit was lost (a crash or a rebalance before it reached
 * the broker) come again; they are passed over, not tried afresh. Retry topics are not looked up: their letters are
 * kept at the original coordinates. When the database does not answer, nothing of the batch is applied: the
 * partition is paused and the batch comes again (false).
 */
export async function lookUpGivenUp(
  ctx: PartitionWorkerContext,
  batch: Batch,
  control: BatchControl,
): Promise<boolean> {
  const { retryTopics, retries, failures } = ctx;
  if (retryTopics !== undefined && retryTopics.stageOf(batch.topic).stage !== 0) return true;
  for (let from = retries.lookupFrom(batch, batch.records); from !== undefined; ) {
    try {
      const found = await ctx.givenUpFrom(batch, from);
      retries.lookedUp(batch, found.letters, found.complete);
    } catch (error) {
      const first = batch.records[0]!;
      if (!(await failures.waitOutside(first, error, control))) {
        ctx.lookupFailed(batch, error);
        failures.pauseFor(first, LOOKUP_RETRY_MS, control);
      }
      return false;
    }
    from = retries.lookupFrom(batch, batch.records);
  }
  return true;
}

/** A batch of the dead-letter topic: this group's records go into `dead_letters` at their original coordinates. */
export async function keepFromDeadLetterTopic(
  ctx: PartitionWorkerContext,
  batch: Batch,
  control: BatchControl,
): Promise<void> {
  for (const record of batch.records) {
    if (groupOf(record) === ctx.group) {
      const original = originalOf(record);
      const input = { ...original, error: new Error(original.reason), attempts: attemptsOf(record) };
      if (!(await ctx.settler.giveUp(record, input, control.signal))) return;
    } else if (!(await ctx.settler.moveOver(record, control.signal))) return;
    control.resolve(record.offset);
  }
}

/**
 * Lanes commit the offset inside their own transactions when the log is in this database, each with the position it
 * saw; two lanes finishing together can commit in the other order and leave the lower one (the records above it
 * then come again after a clean close, lag never reaches 0, and a dead letter discarded meanwhile would be applied).
 * Once the lanes are done, nothing else writes this partition's offset: the batch's final position is written once,
 * also when the consumer is closing (a clean close ends with the offset at the end). A partition whose lease was
 * lost is refused by the commit itself (it checks the lease), so the batch's signal is not consulted.
 */
export async function commitFinalPosition(ctx: PartitionWorkerContext, progress: Progress): Promise<void> {
  if (!ctx.offsetsInTransaction()) return;
  // A failure (lost lease, the database gone) leaves what the lanes committed: never past an unfinished record, so
  // at worst records come again and their dedup rows absorb them.
  await ctx.db
    .transaction((tx) => ctx.transportConsumer().commitWithin!(tx, [progress.position()]))
    .catch(() => undefined);
}
