import type { Batch, BatchControl, IncomingRecord } from '../transport/port.ts';
import type { PartitionWorkerContext } from './partition-worker.ts';
import { type Prepared, prepareBatch } from './prepare.ts';
import { Progress } from './progress.ts';

/** A batch decoded and tracked: what its lanes apply, what stops it, and how far it has come. */
export interface TrackedBatch extends Prepared {
  /** Records given up on earlier that this batch brought again: finished without a transaction. */
  passed: IncomingRecord[];
  progress: Progress;
}

/**
 * Decodes a batch (records given up on passed over) and tracks the records this consumer must finish, so that the
 * partition's position moves up to the lowest record not finished yet, whatever order the lanes finish in.
 */
export async function trackBatch(
  ctx: PartitionWorkerContext,
  batch: Batch,
  control: BatchControl,
): Promise<TrackedBatch> {
  const { retries, retryTopics, group, decode, settler } = ctx;
  // Records given up on above an unfinished one (keys in parallel) come again with this re-fetch: passed over as
  // finished, never tried (and dead-lettered, or applied after their dead letter) a second time.
  const givenUp = retries.givenUpIn(batch.records);
  const fresh = givenUp.size === 0 ? batch : { ...batch, records: batch.records.filter((r) => !givenUp.has(r.offset)) };
  const { items, poison, waitUntil, others } = await prepareBatch(fresh, {
    retryTopics,
    group,
    decode,
    onSkew: ctx.skewed,
  });
  // Only those below where this batch stops taking records (a poison record, one not due): the rest come again.
  const cutoff = BigInt((poison ?? waitUntil)?.record.offset ?? batch.records.at(-1)?.offset ?? '0') + 1n;
  const passed = batch.records.filter((r) => givenUp.has(r.offset) && BigInt(r.offset) < cutoff);
  const tracked = [
    ...(others ? [others] : []),
    ...items.map((item) => item.record),
    ...(poison ? [poison.record] : []),
  ];
  // In offset order already; records passed over are merged in (rarely: only after a give-up above a retrying key).
  if (passed.length > 0) {
    tracked.push(...passed);
    tracked.sort((a, b) => (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1));
  }
  // Resolved and committed up to the lowest record not finished yet, whatever order the lanes finish in.
  const progress = new Progress(batch, tracked, (through, position) => {
    control.resolve(through);
    if (!ctx.offsetsInTransaction()) settler.commitInBackground(position);
  });
  if (passed.length > 0) progress.finished(passed);
  return { items, poison, waitUntil, others, passed, progress };
}
