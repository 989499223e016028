import type { IncomingRecord, TopicPartition } from '../transport/port.ts';
import { partitionId } from '../transport/position.ts';

interface Failing {
  offset: string;
  attempts: number;
  firstFailedAt: Date;
}

/**
 * Blocking retries that block only their own partition: a failing record's partition is paused for its backoff and
 * resumed by a timer, while the other partitions keep flowing. Attempts are remembered per partition and offset
 * across the re-fetches in between.
 */
export class PausedRetries {
  /** Per partition, the failing records by offset (several at once when keys run in parallel). */
  readonly #failing = new Map<string, Map<string, Failing>>();
  /**
   * Per partition, records given up on (dead-lettered, forwarded) while a record below them was not finished (keys in
   * parallel): the re-fetch from that record brings them again, and with no dedup row they would be tried afresh.
   */
  readonly #settledAhead = new Map<string, Set<string>>();
  /** Per partition, its one pending resume (the latest due time of its lanes' backoffs). */
  readonly #timers = new Map<string, { timer: NodeJS.Timeout; due: number }>();
  /** Partitions a record stopped (`deadLetters: false`): no timer resumes them. */
  readonly #stopped = new Set<string>();

  static #key(tp: TopicPartition): string {
    return partitionId(tp);
  }

  /** Counts one more failed attempt of `record` (a different offset starts again at one). */
  failed(record: IncomingRecord): Failing {
    const key = PausedRetries.#key(record);
    const failing = this.#failing.get(key) ?? new Map<string, Failing>();
    this.#failing.set(key, failing);
    const known = failing.get(record.offset);
    const next = known
      ? { ...known, attempts: known.attempts + 1 }
      : { offset: record.offset, attempts: 1, firstFailedAt: new Date() };
    failing.set(record.offset, next);
    return next;
  }

  /** These records were applied or dead-lettered: forget their failures. */
  settled(records: readonly IncomingRecord[]): void {
    for (const record of records) {
      const failing = this.#failing.get(PausedRetries.#key(record));
      if (!failing?.delete(record.offset)) continue;
      if (failing.size === 0) this.#failing.delete(PausedRetries.#key(record));
    }
  }

  /** `record` was given up on (dead-lettered or forwarded): a re-fetch must not try it again. */
  givenUp(record: IncomingRecord): void {
    const key = PausedRetries.#key(record);
    const offsets = this.#settledAhead.get(key) ?? new Set<string>();
    this.#settledAhead.set(key, offsets.add(record.offset));
  }

  /**
   * Of a batch fetched from `from` on: the records already given up on (to pass over as finished). Those below `from`
   * are forgotten: the partition's position is past them.
   */
  givenUpIn(records: readonly IncomingRecord[]): Set<string> {
    const first = records[0];
    const offsets = first && this.#settledAhead.get(PausedRetries.#key(first));
    if (!first || !offsets) return new Set();
    const from = BigInt(first.offset);
    for (const offset of offsets) if (BigInt(offset) < from) offsets.delete(offset);
    if (offsets.size === 0) this.#settledAhead.delete(PausedRetries.#key(first));
    return new Set(records.filter((record) => offsets.has(record.offset)).map((record) => record.offset));
  }

  /**
   * Resumes `partition` after `delayMs`, unless closed first. One timer per partition: several lanes backing off at
   * once resume it at the latest of their due times (an earlier one would cut the others' backoffs short), and a
   * stopped partition is never resumed by a timer.
   */
  resumeLater(partition: TopicPartition, delayMs: number, resume: () => void): void {
    const key = PausedRetries.#key(partition);
    if (this.#stopped.has(key)) return;
    const due = Date.now() + delayMs;
    const pending = this.#timers.get(key);
    if (pending && pending.due >= due) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      if (!this.#stopped.has(key)) resume();
    }, delayMs);
    this.#timers.set(key, { timer, due });
  }

  /** A record stopped `partition`: its pending resume is dropped and no later backoff resumes it. */
  stop(partition: TopicPartition): void {
    const key = PausedRetries.#key(partition);
    this.#stopped.add(key);
    const pending = this.#timers.get(key);
    if (pending) clearTimeout(pending.timer);
    this.#timers.delete(key);
  }

  /** Whether a record stopped `partition`. */
  isStopped(partition: TopicPartition): boolean {
    return this.#stopped.has(PausedRetries.#key(partition));
  }

  close(): void {
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#stopped.clear();
    this.#failing.clear();
    this.#settledAhead.clear();
  }
}
