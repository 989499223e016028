import type { Db } from '../db/port.ts';
import type { Event } from '../envelope/event.ts';
import { dedupKeyOf } from '../envelope/identity.ts';
import type { MessagingSystem } from '../observability/semconv.ts';
import { type RangeTrace, traceRange } from '../observability/trace-consumer.ts';
import type { Batch, BatchControl, BatchHandler, Consumer, IncomingRecord, TopicPartition } from '../transport/port.ts';
import { type ApplyIn, type Decoded, HandlerFailure } from './apply.ts';
import { isLeaseLost } from './classify.ts';
import type { Failures } from './failures.ts';
import type { KeyOrder } from './key-order/key-order.ts';
import { lanesOf, type ResolvedConcurrency, runLanes } from './lanes.ts';
import type { ConsumerOptions } from './options.ts';
import type { PausedRetries } from './paused-retries.ts';
import { prepareBatch } from './prepare.ts';
import { Progress } from './progress.ts';
import { attemptsOf, groupOf, originalOf, type RetryTopics } from './retry-topics.ts';
import type { Settler } from './settle.ts';
import type { StartedRecords } from './started.ts';
import type { Outcome } from './types.ts';

/** How long a partition waits before its dead letters are looked up again after a failure that is not an outage. */
const LOOKUP_RETRY_MS = 1000;

export interface PartitionWorkerContext {
  db: Db;
  group: string;
  applyIn: ApplyIn;
  /** The transport as a `messaging.system` (spans and metrics). */
  system: MessagingSystem;
  decode: (record: IncomingRecord) => Event | Promise<Event>;
  retryTopics: RetryTopics | undefined;
  keyOrder: KeyOrder | undefined;
  /** Wakes the key-order drainer (a hold was released). */
  drainSoon: () => void;
  settler: Settler;
  failures: Failures;
  retries: PausedRetries;
  /** Starts counted in the database, for partitions whose first batch starts where an earlier one died. */
  started: StartedRecords;
  /**
   * The records this group gave up on in `partition` from offset `from` on (offset → dedup key, one page in offset
   * order; `complete` when it reached the end).
   */
  givenUpFrom: (
    partition: TopicPartition,
    from: string,
  ) => Promise<{ letters: ReadonlyMap<string, string>; complete: boolean }>;
  /** A retry topic's record due further away than the topic's delay (a clock ahead): taken now, logged here. */
  skewed: (record: IncomingRecord, skewMs: number) => void;
  /** A dead-letter lookup failed for another reason than an outage or contention (logged; the batch comes again). */
  lookupFailed: (partition: TopicPartition, error: unknown) => void;
  concurrency: ResolvedConcurrency;
  offsetsInTransaction: () => boolean;
  transportConsumer: () => Consumer;
  /** Whether the application paused the consumer, and where to note a partition held meanwhile. */
  held: () => boolean;
  hold: (partition: TopicPartition) => void;
  faults: ConsumerOptions['faults'];
  onOutcome: ConsumerOptions['onOutcome'];
}

/**
 * What the consumer does with one batch of one partition (the transport's batch handler): decode, split into lanes
 * (one, or one per key), apply each lane's ranges in their own transactions, settle the failures, and move the
 * partition's position up to the lowest record not yet finished.
 */
export function createPartitionWorker(ctx: PartitionWorkerContext): BatchHandler {
  const { db, group, applyIn, decode, retryTopics, keyOrder, settler, failures, retries, concurrency, started } = ctx;

  /**
   * One database transaction for a range of one partition: park what waits behind a held key, claim and apply the rest,
   * release the holds their holders were (key-ordered), and commit the offset along when the log is in this database.
   */
  async function applyRange(range: Decoded[], signal: AbortSignal, progress: Progress): Promise<Outcome[]> {
    const trace = traceRange(
      ctx.system,
      group,
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
  }

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

  /** Applies `items` in order; returns false when it stopped early (closing, revoked, paused or stopped). */
  async function applyAll(
    items: Decoded[],
    control: BatchControl,
    progress: Progress,
    careful = false,
  ): Promise<boolean> {
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
      failures.recovered();
      await ctx.faults?.('consumer:after-db-commit');
      if (ctx.onOutcome) {
        for (const [index, outcome] of outcomes.entries()) ctx.onOutcome(range[index]!.event, outcome);
      }
      const records = range.map((item) => item.record);
      retries.settled(records);
      started.finished(records);
      progress.finished(records);
      start = end;
      end = careful ? start + 1 : items.length;
    }
    return true;
  }

  /**
   * Lanes commit the offset inside their own transactions when the log is in this database, each with the position it
   * saw; two lanes finishing together can commit in the other order and leave the lower one (the records above it
   * then come again after a clean close, lag never reaches 0, and a dead letter discarded meanwhile would be applied).
   * Once the lanes are done, nothing else writes this partition's offset: the batch's final position is written once,
   * also when the consumer is closing (a clean close ends with the offset at the end). A partition whose lease was
   * lost is refused by the commit itself (it checks the lease), so the batch's signal is not consulted.
   */
  async function commitFinalPosition(progress: Progress): Promise<void> {
    if (!ctx.offsetsInTransaction()) return;
    // A failure (lost lease, the database gone) leaves what the lanes committed: never past an unfinished record, so
    // at worst records come again and their dedup rows absorb them.
    await db
      .transaction((tx) => ctx.transportConsumer().commitWithin!(tx, [progress.position()]))
      .catch(() => undefined);
  }

  /**
   * Before the first batch since the partition was assigned (and past each full page): the group's dead letters from
   * where the batch starts. Records given up on whose offset commit was lost (a crash or a rebalance before it reached
   * the broker) come again; they are passed over, not tried afresh. Retry topics are not looked up: their letters are
   * kept at the original coordinates. When the database does not answer, nothing of the batch is applied: the
   * partition is paused and the batch comes again (false).
   */
  async function lookUpGivenUp(batch: Batch, control: BatchControl): Promise<boolean> {
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
  async function keepFromDeadLetterTopic(batch: Batch, control: BatchControl): Promise<void> {
    for (const record of batch.records) {
      if (groupOf(record) === group) {
        const original = originalOf(record);
        const input = { ...original, error: new Error(original.reason), attempts: attemptsOf(record) };
        if (!(await settler.giveUp(record, input, control.signal))) return;
      } else if (!(await settler.moveOver(record, control.signal))) return;
      control.resolve(record.offset);
    }
  }

  return async function handleBatch(batch: Batch, control: BatchControl): Promise<void> {
    if (ctx.held()) {
      // Paused by the application (e.g. a circuit breaker is open): nothing of this batch is applied; lag grows.
      ctx.hold({ topic: batch.topic, partition: batch.partition });
      control.pause();
      return;
    }
    if (retryTopics?.stageOf(batch.topic).stage === 'dlt') return keepFromDeadLetterTopic(batch, control);
    if (!(await lookUpGivenUp(batch, control))) return;
    // Records given up on above an unfinished one (keys in parallel) come again with this re-fetch: passed over as
    // finished, never tried (and dead-lettered, or applied after their dead letter) a second time.
    const givenUp = retries.givenUpIn(batch.records);
    const fresh =
      givenUp.size === 0 ? batch : { ...batch, records: batch.records.filter((r) => !givenUp.has(r.offset)) };
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
    // Another group's records before the first of ours are moved over; those between ours go with our next commit.
    if (others && !(await settler.moveOver(others, control.signal, progress))) return;
    if (others) progress.finished([others]);
    const careful = items.length > 0 && (await started.careful(items[0]!.record));
    const lanes = lanesOf(items, concurrency.mode);
    const ran = await runLanes(lanes, concurrency.max, (lane) => applyAll(lane, control, progress, careful));
    // Records passed over move the position without a transaction of their own: written here (the lanes' own commits
    // may not reach past them, e.g. a batch ending with one).
    if (lanes.length > 1 || passed.length > 0) await commitFinalPosition(progress);
    if (!ran) return;
    if (poison) await failures.failed(poison.record, poison.error, control, progress);
    else if (waitUntil) {
      // A retry topic's head is not due: pause its partition until it is; never sleep holding it.
      failures.pauseFor(waitUntil.record, waitUntil.due - Date.now(), control);
    }
  };
}
