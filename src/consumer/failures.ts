import { callBack } from '../observability/callback.ts';
import { errorFields, type Logger } from '../observability/logger.ts';
import { fullJitter } from '../observability/sleep.ts';
import type { BatchControl, Consumer, IncomingRecord } from '../transport/port.ts';
import { isContention, isPermanent, type PermanentErrors } from './classify.ts';
import type { ConsumerOptions } from './options.ts';
import type { PausedRetries } from './paused-retries.ts';
import type { Progress } from './progress.ts';
import { attemptsOf, type RetryTopics } from './retry-topics.ts';
import type { Settler } from './settle.ts';

export interface FailuresContext {
  group: string;
  logger: Logger;
  retries: PausedRetries;
  settler: Settler;
  retryTopics: RetryTopics | undefined;
  /** Whether a failure is an outage of the consumer's database or registry (see classify.ts). */
  isOutage: (error: unknown) => Promise<boolean>;
  backoff: { baseMs: number; capMs: number };
  maxAttempts: number;
  /** Keep given-up records as dead letters (else a given-up record stops its partition). */
  deadLetters: boolean;
  permanentErrors: PermanentErrors | undefined;
  onStopped: ConsumerOptions['onStopped'];
  transportConsumer: () => Consumer | undefined;
}

/**
 * The failure policy of a partition's records: what becomes of a record that cannot be applied now (waited out,
 * retried in place, forwarded to a retry topic, dead-lettered, or its partition stopped), each step counted per record
 * and moving the batch's position only once the record is settled.
 */
export class Failures {
  /** Outages and contention in a row (the backoff grows with them); reset by the next committed range. */
  #outages = 0;

  constructor(readonly ctx: FailuresContext) {}

  /** A range committed: the next outage starts its backoff again. */
  recovered(): void {
    this.#outages = 0;
  }

  stopPartition(record: IncomingRecord, error: unknown, control: BatchControl): void {
    // Keys in parallel: another lane of the batch may stop it too, or have a backoff pending; one stop, and no timer
    // resumes the partition past the record.
    control.pause();
    if (this.ctx.retries.isStopped(record)) return;
    this.ctx.retries.stop(record);
    this.ctx.logger.error('record cannot be applied; partition stopped, offset left uncommitted', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      group: this.ctx.group,
      ...errorFields(error),
    });
    callBack(this.ctx.logger, 'onStopped', this.ctx.onStopped, [record, error], { offset: record.offset });
  }

  /** Pauses the partition of `record` and resumes it after `delayMs` (the rest of the batch is fetched again then). */
  pauseFor(record: IncomingRecord, delayMs: number, control: BatchControl): void {
    const partition = { topic: record.topic, partition: record.partition };
    control.pause();
    this.ctx.retries.resumeLater(partition, delayMs, () => {
      try {
        this.ctx.transportConsumer()?.resume([partition]);
      } catch (error) {
        // revoked meanwhile: its next owner starts from the committed offset
        this.ctx.logger.debug('resume after backoff failed', errorFields(error));
      }
    });
  }

  /**
   * True when `error` is nobody's record's fault and the partition was paused to try again later, counting no attempt:
   * the database went away (a restart, a network cut) or the work met contention (a deadlock, a serialization failure,
   * a lock timeout). Only this partition waits, with a growing backoff; nothing is dead-lettered.
   */
  async waitOutside(record: IncomingRecord, error: unknown, control: BatchControl): Promise<boolean> {
    const outage = await this.ctx.isOutage(error);
    if (!outage && !isContention(error)) return false;
    this.#outages += 1;
    const delay = fullJitter(Math.min(this.#outages, 8), this.ctx.backoff.baseMs, this.ctx.backoff.capMs);
    this.ctx.logger.warn(
      outage
        ? 'database unreachable; partition paused until the retry'
        : 'contention; partition paused until the retry',
      {
        delayMs: delay,
        ...errorFields(error),
      },
    );
    this.pauseFor(record, delay, control);
    return true;
  }

  /** A record that cannot be applied now: forwarded, dead-lettered, or retried in place; false when the batch stops. */
  async failed(record: IncomingRecord, error: unknown, control: BatchControl, progress: Progress): Promise<boolean> {
    if (await this.waitOutside(record, error, control)) return false;
    if (this.ctx.retryTopics) {
      if (!(await this.ctx.settler.forward(record, error, attemptsOf(record) + 1, control.signal, record, progress)))
        return false;
      this.ctx.retries.givenUp(record);
      progress.finished([record]);
      return true;
    }
    const { attempts, firstFailedAt } = this.ctx.retries.failed(record);
    if (isPermanent(error, this.ctx.permanentErrors) || attempts >= this.ctx.maxAttempts) {
      if (!this.ctx.deadLetters) {
        this.stopPartition(record, error, control);
        return false;
      }
      const input = { record, error, attempts, firstFailedAt };
      if (!(await this.ctx.settler.giveUp(record, input, control.signal, progress))) return false;
      this.ctx.retries.settled([record]);
      this.ctx.retries.givenUp(record);
      progress.finished([record]);
      return true;
    }
    // Retry in place after a backoff, with only this partition paused: the others keep flowing meanwhile.
    const delay = fullJitter(attempts, this.ctx.backoff.baseMs, this.ctx.backoff.capMs);
    this.ctx.logger.warn('apply failed; partition paused until the retry', {
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      attempts,
      delayMs: delay,
      ...errorFields(error),
    });
    this.pauseFor(record, delay, control);
    return false;
  }
}
