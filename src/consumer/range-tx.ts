import { dedupKeyOf } from '../envelope/identity.ts';
import { type RangeTrace, traceRange } from '../observability/trace-consumer.ts';
import { type Decoded, HandlerFailure } from './apply.ts';
import type { PartitionWorkerContext } from './partition-worker.ts';
import type { Progress } from './progress.ts';
import type { Outcome } from './types.ts';

export type ApplyRange = (range: Decoded[], signal: AbortSignal, progress: Progress) => Promise<Outcome[]>;

/**
 * One database transaction for a range of one partition: park what waits behind a held key, claim and apply the rest,
 * release the holds their holders were (key-ordered), and commit the offset along when the log is in this database.
 */
export function createRangeTx(ctx: PartitionWorkerContext): ApplyRange {
  const { db, applyIn, retryTopics, keyOrder, started } = ctx;

  async function applyRangeIn(
    range: Decoded[],
    signal: AbortSignal,
    progress: Progress,
    trace: RangeTrace,
  ): Promise<Outcome[]> {
    return db.transaction(async (tx) => {
      const topic = range[0]!.record.topic;
      const fromMain = retryTopics === undefined || retryTopics.stageOf(topic).stage === 0;
      const parked = keyOrder && fromMain ? await keyOrder.park(tx, topic, range) : undefined;
      const outcomes = await applyIn(tx, range, signal, parked);
      if (keyOrder) {
        const done = range.filter((_, index) => outcomes[index] !== 'parked').map((item) => dedupKeyOf(item.event));
        if ((await keyOrder.release(tx, done)) > 0) ctx.drainSoon();
      }
      await started.finishIn(
        tx,
        range.map((item) => item.record),
      );
      if (ctx.offsetsInTransaction()) {
        // The log lives in this database: the offset commits with the effects, exactly once inside one database.
        // Never past the batch's lowest unfinished record (keys in parallel finish out of offset order).
        await ctx.transportConsumer().commitWithin!(tx, [progress.positionWith(range.map((item) => item.record))]);
      }
      await ctx.faults?.('consumer:before-db-commit');
      trace.committing();
      return outcomes;
    });
  }

  return async function applyRange(range, signal, progress) {
    const trace = traceRange(
      ctx.system,
      ctx.group,
      range.map((item) => item.record),
    );
    try {
      const outcomes = await applyRangeIn(range, signal, progress, trace);
      trace.end(outcomes);
      return outcomes;
    } catch (error) {
      trace.end(undefined, error instanceof HandlerFailure ? error.error : error);
      throw error;
    }
  };
}
