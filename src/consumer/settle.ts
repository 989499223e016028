import type { Db, Queryable } from '../db/port.ts';
import type { DeadLetterStore } from '../deadletter/store.ts';
import { eventKeyOfRecord } from '../envelope/cloudevents.ts';
import { callBack } from '../observability/callback.ts';
import { errorFields, type Logger } from '../observability/logger.ts';
import { fullJitter, sleep } from '../observability/sleep.ts';
import type { Consumer, IncomingRecord, Producer, TopicPartitionOffset } from '../transport/port.ts';
import { positionAfter } from '../transport/position.ts';
import { isLeaseLost } from './classify.ts';
import type { KeyOrder } from './key-order/key-order.ts';
import type { ConsumerOptions } from './options.ts';
import type { Progress } from './progress.ts';
import { originalOf, type RetryTopics } from './retry-topics.ts';

/** What the consumer knows once it runs, and what settling a record needs of it. */
export interface SettleContext {
  db: Db;
  group: string;
  logger: Logger;
  store: DeadLetterStore;
  keyOrder: KeyOrder | undefined;
  retryTopics: RetryTopics | undefined;
  backoff: { baseMs: number; capMs: number };
  transportConsumer: () => Consumer;
  producer: () => Producer;
  offsetsInTransaction: () => boolean;
  onDeadLetter: ConsumerOptions['onDeadLetter'];
  /** Whether retrying cannot help (such a record goes straight to the dead-letter topic). */
  isPermanent: (error: unknown) => boolean;
  /**
   * In the transaction giving up on it: whether the group already applied the event with this dedup key, waiting for
   * a member applying it right now (its uncommitted dedup claim).
   */
  isProcessed: (tx: Queryable, eventId: string) => Promise<boolean>;
}

/** What a dead letter keeps: the record as produced, and why it failed. */
export interface KeepInput {
  record: IncomingRecord;
  error: unknown;
  attempts: number;
  firstFailedAt: Date;
  code?: string;
  reason?: string;
}

/** Sends of a forwarded record before it is kept as a dead letter in the database instead. */
const maxForwardAttempts = 8;

function reasonOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** What is moved past: a record of the transport (its offset), or a parked record (its row in `parked_records`). */
export type Consumed = IncomingRecord | { parkedId: string; record: IncomingRecord };

/** How a settling ended: committed, stopped first, or (a parked record) found applied by another member meanwhile. */
type Settled = 'done' | 'stopped' | 'gone';

/**
 * The ways a consumer moves past a record it could not apply, each of them recorded before the offset moves on, and
 * each retried until it succeeds (nothing is skipped unrecorded): keep it as a dead letter, or forward it to the next
 * retry topic (or the dead-letter topic). The offset moves in the same transaction when the log is in this database.
 */
export class Settler {
  constructor(readonly ctx: SettleContext) {}

  /**
   * Runs `work` and moves past `consumed` (its offset; or, for a parked record, its parked row), retrying until it
   * commits. A parked record no longer parked (another member's drainer applied it) is left alone: `'gone'`.
   */
  async #settle(
    consumed: Consumed,
    signal: AbortSignal,
    work: (tx: Queryable) => Promise<void>,
    progress: Progress | undefined,
  ): Promise<Settled> {
    const moveOffset = !('parkedId' in consumed);
    const { db, logger, backoff } = this.ctx;
    let gone = false;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return 'stopped';
      try {
        await db.transaction(async (tx) => {
          gone = !moveOffset && !(await this.ctx.keyOrder!.stillParked(tx, consumed));
          if (gone) return;
          await work(tx);
          if (!moveOffset) await this.ctx.keyOrder!.unpark(tx, consumed.parkedId);
          else if (this.ctx.offsetsInTransaction()) {
            // With a batch's progress, never past its lowest unfinished record (keys finish out of offset order).
            const position = progress ? progress.positionWith([consumed]) : positionAfter(consumed);
            await this.ctx.transportConsumer().commitWithin!(tx, [position]);
          }
        });
        break;
      } catch (error) {
        if (isLeaseLost(error)) {
          // This member no longer holds the partition: its next holder settles the record again.
          logger.info('lease lost while recording a failed record; partition dropped', errorFields(error));
          return 'stopped';
        }
        logger.warn('could not record a failed record; retrying', errorFields(error));
        await sleep(fullJitter(attempt, backoff.baseMs, backoff.capMs), signal);
      }
    }
    // With a batch's progress, its caller moves the position (and commits it) once the record is finished.
    if (gone) {
      const { topic, offset } = 'parkedId' in consumed ? consumed.record : consumed;
      logger.info('a parked record that failed here was applied by another member meanwhile; left as applied', {
        topic,
        offset,
      });
      return 'gone';
    }
    if (moveOffset && !progress && !this.ctx.offsetsInTransaction()) this.commitInBackground(positionAfter(consumed));
    return 'done';
  }

  /** The offset commit after the database commit does not hold up the next batch; a lost one means a deduplicated redelivery. */
  commitInBackground(position: TopicPartitionOffset): void {
    this.ctx
      .transportConsumer()
      .commit([position])
      .catch((error: unknown) => {
        // A commit refused for a lost lease: the partition's next holder redelivers from the committed offset.
        if (isLeaseLost(error)) this.ctx.logger.info('offset commit refused: lease lost', errorFields(error));
        else
          this.ctx.logger.warn('offset commit failed; records may be redelivered (deduplicated)', errorFields(error));
      });
  }

  /** Moves past a record this group has nothing to do with (another group's record in a shared retry topic). */
  async moveOver(consumed: IncomingRecord, signal: AbortSignal, progress?: Progress): Promise<boolean> {
    return (await this.#settle(consumed, signal, async () => undefined, progress)) !== 'stopped';
  }

  /**
   * Keeps `input.record` as a dead letter (holding its key when key-ordered) and moves past `consumed` (the same record,
   * or its copy on the dead-letter topic).
   */
  async giveUp(consumed: Consumed, input: KeepInput, signal: AbortSignal, progress?: Progress): Promise<boolean> {
    const { group, store, keyOrder, logger } = this.ctx;
    const eventId = eventKeyOfRecord(input.record); // the dedup key (source + id), what key holds compare
    let id: string | undefined;
    let applied = false;
    const done = await this.#settle(
      consumed,
      signal,
      async (tx) => {
        // A member that lost its partition meanwhile (a Kafka member past max.poll.interval.ms: nothing aborts its
        // batch) may give up on a record the new owner has applied since: applied AND dead, a stale letter.
        applied = eventId !== null && !('parkedId' in consumed) && (await this.ctx.isProcessed(tx, eventId));
        if (applied) return;
        id = await store.keep(tx, { consumer: group, eventId, ...input });
        if (keyOrder && eventId) await keyOrder.hold(tx, input.record, eventId);
      },
      progress,
    );
    if (done !== 'done') return done === 'gone';
    const { record, error, attempts } = input;
    if (applied) {
      logger.warn(
        'record failed here but was applied by another member meanwhile (this one lost its partition); no dead letter',
        {
          topic: record.topic,
          partition: record.partition,
          offset: record.offset,
          group,
          ...errorFields(error),
        },
      );
      return true;
    }
    logger.error('record dead-lettered', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      group,
      attempts,
      deadLetterId: id,
      ...(input.reason ? { error: input.reason, code: input.code } : errorFields(error)),
    });
    callBack(logger, 'onDeadLetter', this.ctx.onDeadLetter, [{ id, record, error, attempts }], { deadLetterId: id });
    return true;
  }

  /**
   * Forwards `record` to its next retry topic (or the dead-letter topic) after failed attempt `attempts`, holding its key
   * when key-ordered, and moves past it. A crash between the send and the offset only forwards it twice: the copies
   * share the event id, so the dedup rows (or the dead-letter row's coordinates) absorb the second.
   */
  async forward(
    record: IncomingRecord,
    error: unknown,
    attempts: number,
    signal: AbortSignal,
    consumed: Consumed = record,
    progress?: Progress,
  ): Promise<boolean> {
    const { group, keyOrder, retryTopics, logger, backoff } = this.ctx;
    const outgoing = retryTopics!.forward(record, error, attempts, group, this.ctx.isPermanent(error));
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return false;
      try {
        await this.ctx.producer().send([outgoing]);
        break;
      } catch (sendError) {
        logger.warn('could not forward a failed record; retrying', { to: outgoing.topic, ...errorFields(sendError) });
        if (attempt >= maxForwardAttempts) {
          // A send that keeps failing (a record grown too large by the headers, a topic that cannot be written) must
          // not stop the partition: the record is kept as a dead letter in the database instead.
          const original = originalOf(record);
          const reason = `${reasonOf(error)}; forwarding to ${outgoing.topic} failed: ${reasonOf(sendError)}`;
          const input = { record: original.record, error, attempts, firstFailedAt: original.firstFailedAt, reason };
          return this.giveUp(consumed, input, signal, progress);
        }
        await sleep(fullJitter(attempt, backoff.baseMs, backoff.capMs), signal);
      }
    }
    const eventId = eventKeyOfRecord(record);
    const fromMain = retryTopics!.stageOf(record.topic).stage === 0;
    logger.warn('apply failed; record forwarded', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      to: outgoing.topic,
      attempts,
      ...errorFields(error),
    });
    const settled = await this.#settle(
      consumed,
      signal,
      async (tx) => {
        if (keyOrder && eventId && fromMain) await keyOrder.hold(tx, record, eventId);
      },
      progress,
    );
    return settled !== 'stopped';
  }
}
