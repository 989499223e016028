import type { BatchControl } from '../transport/port.ts';
import { type Decoded, HandlerFailure } from './apply.ts';
import { isLeaseLost } from './classify.ts';
import type { PartitionWorkerContext } from './partition-worker.ts';
import type { Progress } from './progress.ts';
import type { ApplyRange } from './range-tx.ts';
import type { Outcome } from './types.ts';

/** Applies a lane's records in offset order; resolves false when it stopped early (closing, revoked, paused, stopped). */
export type ApplyInOrder = (
  items: Decoded[],
  control: BatchControl,
  progress: Progress,
  careful?: boolean,
) => Promise<boolean>;

/**
 * A lane's loop: ranges as long as they apply, split around a failing record (the records before it applied first,
 * the failing one settled alone), one record at a time with its start counted when `careful`.
 */
export function createInOrder(ctx: PartitionWorkerContext, applyRange: ApplyRange): ApplyInOrder {
  const { db, failures, retries, started } = ctx;

  /**
   * Careful (the partition's first batch starts where an earlier one died): one record at a time, its start counted
   * first; a record started more than `maxAttempts` times is given up on without its handler. False when it stopped.
   */
  async function startCarefully(item: Decoded, control: BatchControl, progress: Progress): Promise<boolean | 'done'> {
    const exhausted = await started.startAlone(item.record);
    if (!exhausted) return true;
    if (!(await failures.failed(item.record, exhausted, control, progress))) return false;
    await db.transaction((tx) => started.finishIn(tx, [item.record])).catch(() => undefined);
    started.finished([item.record]);
    return 'done';
  }

  /** After a range committed: the outcomes told, its records finished everywhere they are tracked. */
  async function committed(range: Decoded[], outcomes: Outcome[], progress: Progress): Promise<void> {
    failures.recovered();
    await ctx.faults?.('consumer:after-db-commit');
    if (ctx.onOutcome) {
      for (const [index, outcome] of outcomes.entries()) ctx.onOutcome(range[index]!.event, outcome);
    }
    const records = range.map((item) => item.record);
    retries.settled(records);
    started.finished(records);
    progress.finished(records);
  }

  return async function applyAll(items, control, progress, careful = false) {
    let start = 0;
    let end = careful ? 1 : items.length;
    // A record known to fail (the handler named it): settled after the records before it, without a second call.
    let known: { at: number; error: unknown } | undefined;
    while (start < items.length) {
      if (control.signal.aborted) return false;
      if (known?.at === start) {
        if (!(await failures.failed(items[start]!.record, known.error, control, progress))) return false;
        known = undefined;
        start += 1;
        end = careful ? start + 1 : items.length;
        continue;
      }
      if (careful) {
        const begun = await startCarefully(items[start]!, control, progress);
        if (!begun) return false;
        if (begun === 'done') {
          start += 1;
          end = start + 1;
          continue;
        }
      }
      const range = items.slice(start, end);
      let outcomes: Outcome[];
      try {
        outcomes = await applyRange(range, control.signal, progress);
      } catch (caught) {
        const error = caught instanceof HandlerFailure ? caught.error : caught;
        // The partition is no longer this member's (or the consumer stops): no attempt counted, nothing forwarded or
        // dead-lettered; whoever holds the partition next starts from the committed offset.
        if (isLeaseLost(error) || control.signal.aborted) return false;
        if (await failures.waitOutside(items[start]!.record, error, control)) return false;
        // A failure of a statement the whole range shares (the dedup claim, a COMMIT that answered ROLLBACK, the
        // offset) is no record's own: the range is split until the failure is pinned on one record, so no innocent
        // record is counted an attempt (or dead-lettered) for it.
        const failure =
          caught instanceof HandlerFailure
            ? caught
            : new HandlerFailure(range.length > 1 ? Math.ceil(range.length / 2) : 0, caught);
        // Apply the good records before the failing one first, so the failure holds back nothing but itself.
        if (failure.index > 0) {
          end = start + failure.index;
          if (failure.exact) known = { at: end, error: failure.error };
          continue;
        }
        if (!(await failures.failed(items[start]!.record, failure.error, control, progress))) return false;
        start += 1;
        end = careful ? start + 1 : items.length;
        continue;
      }
      await committed(range, outcomes, progress);
      start = end;
      end = careful ? start + 1 : items.length;
    }
    return true;
  };
}
