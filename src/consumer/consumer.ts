import { assertIdentifier } from '../db/identifiers.ts';
import type { Queryable } from '../db/port.ts';
import { loadSql } from '../db/sql.ts';
import { deadLetterStore } from '../deadletter/store.ts';
import { decodeEvent } from '../envelope/cloudevents.ts';
import type { Event } from '../envelope/event.ts';
import { isUuid } from '../envelope/uuidv7.ts';
import { EffectivelyError, invalidOptions } from '../errors.ts';
import { within } from '../lifecycle.ts';
import { errorFields, stderrLogger } from '../observability/logger.ts';
import { fullJitter, sleep } from '../observability/sleep.ts';
import type { Batch, BatchControl, Consumer, IncomingRecord, TopicPartitionOffset } from '../transport/port.ts';
import { positionAfter } from '../transport/position.ts';
import type { ConsumerOptions, EffectivelyConsumer } from './options.ts';
import { PausedRetries } from './paused-retries.ts';
import { purgeProcessed } from './retention.ts';
import type { Outcome } from './types.ts';

export type { ConsumerOptions, EffectivelyConsumer } from './options.ts';

interface Decoded {
  event: Event;
  record: IncomingRecord;
}

/** A handler failure at position `index` of the applied range (the whole transaction rolled back). */
class HandlerFailure {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {}
}

function isPermanent(error: unknown): boolean {
  return error instanceof EffectivelyError && !error.retryable;
}

/** The position after a committed range. */
function nextPosition(range: Decoded[]): TopicPartitionOffset {
  return positionAfter(range.at(-1)!.record);
}

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
  const store = deadLetterStore({ schema });
  const retries = new PausedRetries();
  const logger = options.logger ?? stderrLogger;
  const { db, group, handler, batchHandler } = options;
  const dedup = loadSql(import.meta.url, 'dedup.sql', schema);
  const groupSettings = loadSql(import.meta.url, 'group-settings.sql', schema);

  let transportConsumer: Consumer | undefined;
  let offsetsInTransaction = false;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;

  async function applyRange(range: Decoded[], signal: AbortSignal): Promise<Outcome[]> {
    return db.transaction(async (tx) => {
      const { rows } = await tx.query<{ event_id: string }>(dedup, [group, range.map((item) => item.event.id)]);
      const fresh = new Set(rows.map((row) => row.event_id));
      const outcomes: Outcome[] = batchHandler
        ? await applyBatch(tx, range, fresh, signal)
        : await applyEach(tx, range, fresh, signal);
      if (offsetsInTransaction) {
        // The log lives in this database: the offset commits with the effects, exactly once inside one database.
        await transportConsumer!.commitWithin!(tx, [nextPosition(range)]);
      }
      await options.faults?.('consumer:before-db-commit');
      return outcomes;
    });
  }

  /** The batch path: one call for every fresh event; a failure of a range of several is bisected by the caller. */
  async function applyBatch(tx: Queryable, range: Decoded[], fresh: Set<string>, signal: AbortSignal) {
    const outcomes: Outcome[] = [];
    const events: Event[] = [];
    for (const { event } of range) {
      const isFresh = fresh.delete(event.id);
      outcomes.push(isFresh ? 'applied' : 'duplicate');
      if (isFresh) events.push(event);
    }
    if (events.length === 0) return outcomes;
    let results: void | ('applied' | 'stale')[];
    try {
      results = await batchHandler!(events, { tx, signal, group });
    } catch (error) {
      throw new HandlerFailure(range.length > 1 ? Math.ceil(range.length / 2) : 0, error);
    }
    if (results) {
      let next = 0;
      for (const [index, outcome] of outcomes.entries()) {
        if (outcome === 'applied' && results[next++] === 'stale') outcomes[index] = 'stale';
      }
    }
    return outcomes;
  }

  async function applyEach(tx: Queryable, range: Decoded[], fresh: Set<string>, signal: AbortSignal) {
    const outcomes: Outcome[] = [];
    for (const [index, { event, record }] of range.entries()) {
      // A repeat (redelivery, or the same id twice in one batch) finds no fresh claim left.
      if (!fresh.delete(event.id)) {
        outcomes.push('duplicate');
        continue;
      }
      try {
        const result = await handler!(event, {
          tx,
          signal,
          group,
          record: { topic: record.topic, partition: record.partition, offset: record.offset },
        });
        outcomes.push(result === 'stale' ? 'stale' : 'applied');
      } catch (error) {
        throw new HandlerFailure(index, error);
      }
    }
    return outcomes;
  }

  /**
   * The offset commit does not hold up the next batch (the transport keeps commits in order and flushes them on
   * close): the database already holds the work, so a commit that fails or never happens only means a redelivery,
   * which the dedup rows absorb.
   */
  function commitInBackground(position: TopicPartitionOffset): void {
    transportConsumer!.commit([position]).catch((error: unknown) => {
      logger.warn('offset commit failed; records may be redelivered (deduplicated)', errorFields(error));
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

  /**
   * Gives up on one record: keeps it as a dead letter (with the offset, in one transaction when the log is in this
   * database) and moves past it. Storing is retried until it succeeds: nothing is skipped unrecorded.
   */
  async function giveUp(
    record: IncomingRecord,
    error: unknown,
    attempts: number,
    firstFailedAt: Date,
    control: BatchControl,
  ): Promise<boolean> {
    if (!keepDeadLetters) {
      stopPartition(record, error, control);
      return false;
    }
    const eventId = isUuid(record.headers.ce_id?.toString()) ? record.headers.ce_id!.toString().toLowerCase() : null;
    let id: string | undefined;
    for (let storeAttempts = 1; ; storeAttempts++) {
      if (control.signal.aborted) return false;
      try {
        id = await db.transaction(async (tx) => {
          const kept = await store.keep(tx, { consumer: group, record, eventId, error, attempts, firstFailedAt });
          if (offsetsInTransaction) await transportConsumer!.commitWithin!(tx, [positionAfter(record)]);
          return kept;
        });
        break;
      } catch (storeError) {
        logger.warn('could not store a dead letter; retrying', { offset: record.offset, ...errorFields(storeError) });
        await sleep(fullJitter(storeAttempts, retryBase, retryCap), control.signal);
      }
    }
    logger.error('record dead-lettered', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      group,
      attempts,
      deadLetterId: id,
      ...errorFields(error),
    });
    if (!offsetsInTransaction) commitInBackground(positionAfter(record));
    control.resolve(record.offset);
    options.onDeadLetter?.({ id, record, error, attempts });
    return true;
  }

  /** Applies `items` in order; returns false when it stopped early (closing, revoked or a stopped partition). */
  async function applyAll(items: Decoded[], control: BatchControl): Promise<boolean> {
    let start = 0;
    let end = items.length;
    while (start < items.length) {
      if (control.signal.aborted) return false;
      const range = items.slice(start, end);
      let outcomes: Outcome[];
      try {
        outcomes = await applyRange(range, control.signal);
      } catch (caught) {
        const failure = caught instanceof HandlerFailure ? caught : new HandlerFailure(0, caught);
        // Apply the good records before the failing one first, so the failure holds back nothing but itself.
        if (failure.index > 0) {
          end = start + failure.index;
          continue;
        }
        const failed = items[start]!.record;
        const { attempts, firstFailedAt } = retries.failed(failed);
        if (isPermanent(failure.error) || attempts >= maxAttempts) {
          if (!(await giveUp(failed, failure.error, attempts, firstFailedAt, control))) return false;
          retries.settled(failed);
          start += 1;
          end = items.length;
          continue;
        }
        // Retry in place after a backoff, with only this partition paused: the others keep flowing meanwhile.
        const delay = fullJitter(attempts, retryBase, retryCap);
        logger.warn('apply failed; partition paused until the retry', {
          topic: failed.topic,
          partition: failed.partition,
          offset: failed.offset,
          attempts,
          delayMs: delay,
          ...errorFields(failure.error),
        });
        const partition = { topic: failed.topic, partition: failed.partition };
        control.pause();
        retries.resumeLater(delay, () => {
          try {
            transportConsumer?.resume([partition]);
          } catch (error) {
            // revoked meanwhile: its next owner starts from the committed offset
            logger.debug('resume after backoff failed', errorFields(error));
          }
        });
        return false;
      }
      await options.faults?.('consumer:after-db-commit');
      if (options.onOutcome) {
        for (const [index, outcome] of outcomes.entries()) options.onOutcome(range[index]!.event, outcome);
      }
      const last = range.at(-1)!.record;
      if (!offsetsInTransaction) commitInBackground(nextPosition(range));
      control.resolve(last.offset);
      retries.settled(last);
      start = end;
      end = items.length;
    }
    return true;
  }

  async function handleBatch(batch: Batch, control: BatchControl): Promise<void> {
    const items: Decoded[] = [];
    let poison: { record: IncomingRecord; error: unknown } | undefined;
    for (const record of batch.records) {
      try {
        items.push({ event: decodeEvent(record), record });
      } catch (error) {
        poison = { record, error };
        break;
      }
    }
    const completed = await applyAll(items, control);
    if (completed && poison) await giveUp(poison.record, poison.error, 1, new Date(), control);
  }

  const consumer: EffectivelyConsumer = {
    start() {
      if (closing) return Promise.reject(new Error('consumer is closed'));
      starting ??= (async () => {
        // Redrive reads this to refuse replays older than the dedup window.
        await db.query(groupSettings, [group, options.retention?.keepMs ?? null]);
        transportConsumer = options.transport.consumer({
          group,
          topics: options.topics,
          maxBatchSize,
          fromBeginning: options.fromBeginning ?? true,
          ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
          ...(options.prefetchKb === undefined ? {} : { prefetchKb: options.prefetchKb }),
          ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
        });
        offsetsInTransaction =
          (options.offsetsInTransaction ?? true) &&
          Boolean(transportConsumer.commitWithin && transportConsumer.usesDb?.(db));
        await transportConsumer.run(handleBatch);
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
        if (transportConsumer && !(await within(transportConsumer.close(), timeoutMs))) {
          logger.warn('consumer close timed out waiting for the in-flight batch', { timeoutMs });
        }
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return consumer.close();
    },
  };
  return consumer;
}
