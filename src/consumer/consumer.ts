import { assertIdentifier } from '../db/identifiers.ts';
import { loadSql } from '../db/sql.ts';
import { deadLetterStore } from '../deadletter/store.ts';
import { decodeEvent } from '../envelope/cloudevents.ts';
import { dedupKeyOf } from '../envelope/identity.ts';
import { invalidOptions } from '../errors.ts';
import { within } from '../lifecycle.ts';
import { errorFields, stderrLogger } from '../observability/logger.ts';
import { fullJitter } from '../observability/sleep.ts';
import type { Batch, BatchControl, Consumer, IncomingRecord, Producer, TopicPartition } from '../transport/port.ts';
import { createApplier, type Decoded, HandlerFailure } from './apply.ts';
import { isContention, isLeaseLost, isPermanent, outageProbe } from './classify.ts';
import { createDrainer } from './key-order/drain.ts';
import { KeyOrder } from './key-order/key-order.ts';
import { lanesOf, resolveConcurrency, runLanes } from './lanes.ts';
import type { ConsumerOptions, EffectivelyConsumer } from './options.ts';
import { PausedRetries } from './paused-retries.ts';
import { createRetryTopics, prepareBatch } from './prepare.ts';
import { Progress } from './progress.ts';
import { purgeProcessed } from './retention.ts';
import { attemptsOf, groupOf, originalOf, RetryTopics } from './retry-topics.ts';
import { Settler } from './settle.ts';
import type { Outcome } from './types.ts';

export type { ConsumerOptions, EffectivelyConsumer } from './options.ts';

/**
 * The idempotent consumer. For each batch, in ONE database transaction: claim the batch's event ids in
 * `processed_events` (one statement), run the handler for the fresh ones only, commit; then commit the offsets.
 * A crash between the two commits redelivers events whose dedup rows exist: they are reported as duplicates.
 */
export function createConsumer(options: ConsumerOptions): EffectivelyConsumer {
  const schema = assertIdentifier(options.schema ?? 'effectively', 'schema');
  const maxBatchSize = options.maxBatchSize ?? 500;
  if (!options.group) throw invalidOptions('group', 'a non-empty string');
  if (!Array.isArray(options.topics) || options.topics.length === 0)
    throw invalidOptions('topics', 'at least one topic');
  if ((typeof options.handler === 'function') === (typeof options.batchHandler === 'function')) {
    throw invalidOptions('handler', 'exactly one of `handler` and `batchHandler` must be a function');
  }
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) throw invalidOptions('maxBatchSize', 'a positive integer');
  const retryBase = options.retry?.baseMs ?? 500;
  const retryCap = options.retry?.capMs ?? 30_000;
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw invalidOptions('maxAttempts', 'a positive integer');
  const keepDeadLetters = options.deadLetters ?? true;
  const retries = new PausedRetries();
  const logger = options.logger ?? stderrLogger;
  const { db, group, handler, batchHandler } = options;
  const groupSettings = loadSql(import.meta.url, 'group-settings.sql', schema);
  const applyIn = createApplier({ group, handler, batchHandler, dedup: loadSql(import.meta.url, 'dedup.sql', schema) });
  const decode = options.decode ?? decodeEvent;
  const isOutage = outageProbe(db);
  const retryTopics = options.retryTopics ? new RetryTopics(options.topics, options.retryTopics) : undefined;
  const keyOrder = options.keyOrdered ? new KeyOrder(schema, group) : undefined;
  const concurrency = resolveConcurrency(options.concurrency);

  let transportConsumer: Consumer | undefined;
  let held = false;
  let outages = 0;
  const heldPartitions = new Map<string, TopicPartition>();
  let producer: Producer | undefined;
  let offsetsInTransaction = false;
  const settler = new Settler({
    db,
    group,
    logger,
    store: deadLetterStore({ schema }),
    keyOrder,
    retryTopics,
    backoff: { baseMs: retryBase, capMs: retryCap },
    transportConsumer: () => transportConsumer!,
    producer: () => {
      producer ??= options.transport.producer({ clientId: `${group}-retries` });
      return producer;
    },
    offsetsInTransaction: () => offsetsInTransaction,
    onDeadLetter: options.onDeadLetter,
    isPermanent: (error) => isPermanent(error, options.permanentErrors),
  });
  const drainer = keyOrder
    ? createDrainer({
        db,
        keyOrder,
        applyIn,
        settler,
        maxAttempts,
        retryTopics: retryTopics !== undefined,
        intervalMs: options.drainIntervalMs ?? 1000,
        decode,
        isOutage,
        logger,
        onOutcome: options.onOutcome,
      })
    : undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;

  /**
   * One database transaction for a range of one partition: park what waits behind a held key, claim and apply the rest,
   * release the holds their holders were (key-ordered), and commit the offset along when the log is in this database.
   */
  async function applyRange(range: Decoded[], signal: AbortSignal, progress: Progress): Promise<Outcome[]> {
    return db.transaction(async (tx) => {
      const topic = range[0]!.record.topic;
      const fromMain = retryTopics === undefined || retryTopics.stageOf(topic).stage === 0;
      const parked = keyOrder && fromMain ? await keyOrder.park(tx, topic, range) : undefined;
      const outcomes = await applyIn(tx, range, signal, parked);
      if (keyOrder) {
        const done = range.filter((_, index) => outcomes[index] !== 'parked').map((item) => dedupKeyOf(item.event));
        if ((await keyOrder.release(tx, done)) > 0) drainer?.soon();
      }
      if (offsetsInTransaction) {
        // The log lives in this database: the offset commits with the effects, exactly once inside one database.
        // Never past the batch's lowest unfinished record (keys in parallel finish out of offset order).
        await transportConsumer!.commitWithin!(tx, [progress.positionWith(range.map((item) => item.record))]);
      }
      await options.faults?.('consumer:before-db-commit');
      return outcomes;
    });
  }

  function stopPartition(record: IncomingRecord, error: unknown, control: BatchControl): void {
    logger.error('record cannot be applied; partition stopped, offset left uncommitted', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      group,
      ...errorFields(error),
    });
    control.pause();
    options.onStopped?.(record, error);
  }

  /** Pauses the partition of `record` and resumes it after `delayMs` (the rest of the batch is fetched again then). */
  function pauseFor(record: IncomingRecord, delayMs: number, control: BatchControl): void {
    const partition = { topic: record.topic, partition: record.partition };
    control.pause();
    retries.resumeLater(delayMs, () => {
      try {
        transportConsumer?.resume([partition]);
      } catch (error) {
        // revoked meanwhile: its next owner starts from the committed offset
        logger.debug('resume after backoff failed', errorFields(error));
      }
    });
  }

  /**
   * True when `error` is nobody's record's fault and the partition was paused to try again later, counting no attempt:
   * the database went away (a restart, a network cut) or the work met contention (a deadlock, a serialization failure,
   * a lock timeout). Only this partition waits, with a growing backoff; nothing is dead-lettered.
   */
  async function waitOutside(record: IncomingRecord, error: unknown, control: BatchControl): Promise<boolean> {
    const outage = await isOutage(error);
    if (!outage && !isContention(error)) return false;
    outages += 1;
    const delay = fullJitter(Math.min(outages, 8), retryBase, retryCap);
    logger.warn(
      outage
        ? 'database unreachable; partition paused until the retry'
        : 'contention; partition paused until the retry',
      {
        delayMs: delay,
        ...errorFields(error),
      },
    );
    pauseFor(record, delay, control);
    return true;
  }

  /** A record that cannot be applied now: forwarded, dead-lettered, or retried in place; false when the batch stops. */
  async function failed(
    record: IncomingRecord,
    error: unknown,
    control: BatchControl,
    progress: Progress,
  ): Promise<boolean> {
    if (await waitOutside(record, error, control)) return false;
    if (retryTopics) {
      if (!(await settler.forward(record, error, attemptsOf(record) + 1, control.signal, record, progress)))
        return false;
      progress.finished([record]);
      return true;
    }
    const { attempts, firstFailedAt } = retries.failed(record);
    if (isPermanent(error, options.permanentErrors) || attempts >= maxAttempts) {
      if (!keepDeadLetters) {
        stopPartition(record, error, control);
        return false;
      }
      const input = { record, error, attempts, firstFailedAt };
      if (!(await settler.giveUp(record, input, control.signal, progress))) return false;
      retries.settled([record]);
      progress.finished([record]);
      return true;
    }
    // Retry in place after a backoff, with only this partition paused: the others keep flowing meanwhile.
    const delay = fullJitter(attempts, retryBase, retryCap);
    logger.warn('apply failed; partition paused until the retry', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      attempts,
      delayMs: delay,
      ...errorFields(error),
    });
    pauseFor(record, delay, control);
    return false;
  }

  /** Applies `items` in order; returns false when it stopped early (closing, revoked, paused or stopped). */
  async function applyAll(items: Decoded[], control: BatchControl, progress: Progress): Promise<boolean> {
    let start = 0;
    let end = items.length;
    // A record known to fail (the handler named it): settled after the records before it, without a second call.
    let known: { at: number; error: unknown } | undefined;
    while (start < items.length) {
      if (control.signal.aborted) return false;
      if (known?.at === start) {
        if (!(await failed(items[start]!.record, known.error, control, progress))) return false;
        known = undefined;
        start += 1;
        end = items.length;
        continue;
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
        if (await waitOutside(items[start]!.record, error, control)) return false;
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
        if (!(await failed(items[start]!.record, failure.error, control, progress))) return false;
        start += 1;
        end = items.length;
        continue;
      }
      outages = 0;
      await options.faults?.('consumer:after-db-commit');
      if (options.onOutcome) {
        for (const [index, outcome] of outcomes.entries()) options.onOutcome(range[index]!.event, outcome);
      }
      const records = range.map((item) => item.record);
      retries.settled(records);
      progress.finished(records);
      start = end;
      end = items.length;
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

  async function handleBatch(batch: Batch, control: BatchControl): Promise<void> {
    if (held) {
      // Paused by the application (e.g. a circuit breaker is open): nothing of this batch is applied; lag grows.
      heldPartitions.set(`${batch.topic}\u0000${batch.partition}`, { topic: batch.topic, partition: batch.partition });
      control.pause();
      return;
    }
    if (retryTopics?.stageOf(batch.topic).stage === 'dlt') return keepFromDeadLetterTopic(batch, control);
    const { items, poison, waitUntil, others } = await prepareBatch(batch, { retryTopics, group, decode });
    const tracked = [
      ...(others ? [others] : []),
      ...items.map((item) => item.record),
      ...(poison ? [poison.record] : []),
    ];
    // Resolved and committed up to the lowest record not finished yet, whatever order the lanes finish in.
    const progress = new Progress(batch, tracked, (through, position) => {
      control.resolve(through);
      if (!offsetsInTransaction) settler.commitInBackground(position);
    });
    // Another group's records before the first of ours are moved over; those between ours go with our next commit.
    if (others && !(await settler.moveOver(others, control.signal, progress))) return;
    if (others) progress.finished([others]);
    const lanes = lanesOf(items, concurrency.mode);
    if (!(await runLanes(lanes, concurrency.max, (lane) => applyAll(lane, control, progress)))) return;
    if (poison) await failed(poison.record, poison.error, control, progress);
    else if (waitUntil) {
      // A retry topic's head is not due: pause its partition until it is; never sleep holding it.
      pauseFor(waitUntil.record, waitUntil.due - Date.now(), control);
    }
  }

  const consumer: EffectivelyConsumer = {
    start() {
      if (closing) return Promise.reject(new Error('consumer is closed'));
      starting ??= (async () => {
        // Redrive reads this to refuse replays older than the dedup window.
        await db.query(groupSettings, [group, options.retention?.keepMs ?? null]);
        const topics = retryTopics ? await createRetryTopics(options, retryTopics) : options.topics;
        transportConsumer = options.transport.consumer({
          group,
          topics,
          maxBatchSize,
          fromBeginning: options.fromBeginning ?? true,
          ...(concurrency.partitions > 1 ? { partitionsInFlight: concurrency.partitions } : {}),
          ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
          ...(options.prefetchKb === undefined ? {} : { prefetchKb: options.prefetchKb }),
          ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
        });
        offsetsInTransaction =
          (options.offsetsInTransaction ?? true) &&
          Boolean(transportConsumer.commitWithin && transportConsumer.usesDb?.(db));
        await transportConsumer.run(handleBatch);
        drainer?.start();
        if (options.retention) {
          const { keepMs, everyMs = 60_000 } = options.retention;
          purgeTimer = setInterval(() => {
            purgeProcessed(db, { schema, olderThanMs: keepMs }).catch((error: unknown) =>
              logger.warn('dedup purge failed', errorFields(error)),
            );
          }, everyMs);
          purgeTimer.unref();
        }
      })();
      return starting;
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        clearInterval(purgeTimer);
        retries.close();
        await starting?.catch(() => undefined);
        // The transport waits for the batch in flight and flushes its pending offset commits before it disconnects.
        const closed = Promise.all([transportConsumer?.close(), drainer?.close()]);
        if (!(await within(closed, timeoutMs))) {
          logger.warn('consumer close timed out waiting for the in-flight batch', { timeoutMs });
        }
        await producer?.close();
      })();
      return closing;
    },
    pause() {
      held = true;
    },
    resume() {
      held = false;
      const partitions = [...heldPartitions.values()];
      heldPartitions.clear();
      if (partitions.length > 0) {
        try {
          transportConsumer?.resume(partitions);
        } catch (error) {
          logger.debug('resume failed (partitions revoked meanwhile)', errorFields(error));
        }
      }
    },
    get paused() {
      return held;
    },
    [Symbol.asyncDispose]() {
      return consumer.close();
    },
  };
  return consumer;
}
