import type { IncomingRecord, TopicPartition } from '../transport/port.ts';

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
  readonly #failing = new Map<string, Failing>();
  readonly #timers = new Set<NodeJS.Timeout>();

  static #key(tp: TopicPartition): string {
    return `${tp.topic}\u0000${tp.partition}`;
  }

  /** Counts one more failed attempt of `record` (a different offset on that partition starts again at one). */
  failed(record: IncomingRecord): Failing {
    const key = PausedRetries.#key(record);
    const known = this.#failing.get(key);
    const next =
      known && known.offset === record.offset
        ? { ...known, attempts: known.attempts + 1 }
        : { offset: record.offset, attempts: 1, firstFailedAt: new Date() };
    this.#failing.set(key, next);
    return next;
  }

  /** The partition moved on (applied or dead-lettered): forget its failing record. */
  settled(tp: TopicPartition): void {
    this.#failing.delete(PausedRetries.#key(tp));
  }

  /** Calls `resume` after `delayMs`, unless closed first. */
  resumeLater(delayMs: number, resume: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      resume();
    }, delayMs);
    this.#timers.add(timer);
  }

  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#failing.clear();
  }
}
