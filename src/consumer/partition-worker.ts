import type { Db } from '../db/port.ts';
import type { Event } from '../envelope/event.ts';
import type { MessagingSystem } from '../observability/semconv.ts';
import type { Batch, BatchControl, BatchHandler, Consumer, IncomingRecord, TopicPartition } from '../transport/port.ts';
import type { ApplyIn } from './apply.ts';
import { commitFinalPosition, keepFromDeadLetterTopic, lookUpGivenUp } from './batch-edges.ts';
import { trackBatch } from './batch-track.ts';
import type { Failures } from './failures.ts';
import { createInOrder } from './in-order.ts';
import type { KeyOrder } from './key-order/key-order.ts';
import { lanesOf, type ResolvedConcurrency, runLanes } from './lanes.ts';
import type { ConsumerOptions } from './options.ts';
import type { PausedRetries } from './paused-retries.ts';
import { createRangeTx } from './range-tx.ts';
import type { RetryTopics } from './retry-topics.ts';
import type { Settler } from './settle.ts';
import type { StartedRecords } from './started.ts';

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
 * (one, or one per key), apply each lane's ranges in their own transactions (`in-order.ts`, `range-tx.ts`), settle the
 * failures, and move the partition's position up to the lowest record not yet finished (`batch-track.ts`).
 */
export function createPartitionWorker(ctx: PartitionWorkerContext): BatchHandler {
  const { retryTopics, failures, concurrency, started } = ctx;
  const applyAll = createInOrder(ctx, createRangeTx(ctx));

  return async function handleBatch(batch: Batch, control: BatchControl): Promise<void> {
    if (ctx.held()) {
      // Paused by the application (e.g. a circuit breaker is open): nothing of this batch is applied; lag grows.
      ctx.hold({ topic: batch.topic, partition: batch.partition });
      control.pause();
      return;
    }
    if (retryTopics?.stageOf(batch.topic).stage === 'dlt') return keepFromDeadLetterTopic(ctx, batch, control);
    if (!(await lookUpGivenUp(ctx, batch, control))) return;
    const { items, poison, waitUntil, others, passed, progress } = await trackBatch(ctx, batch, control);
    // Another group's records before the first of ours are moved over; those between ours go with our next commit.
    if (others && !(await ctx.settler.moveOver(others, control.signal, progress))) return;
    if (others) progress.finished([others]);
    const careful = items.length > 0 && (await started.careful(items[0]!.record));
    const lanes = lanesOf(items, concurrency.mode);
    const ran = await runLanes(lanes, concurrency.max, (lane) => applyAll(lane, control, progress, careful));
    // Records passed over move the position without a transaction of their own: written here (the lanes' own commits
    // may not reach past them, e.g. a batch ending with one).
    if (lanes.length > 1 || passed.length > 0) await commitFinalPosition(ctx, progress);
    if (!ran) return;
    if (poison) await failures.failed(poison.record, poison.error, control, progress);
    else if (waitUntil) {
      // A retry topic's head is not due: pause its partition until it is; never sleep holding it.
      failures.pauseFor(waitUntil.record, waitUntil.due - Date.now(), control);
    }
  };
}
