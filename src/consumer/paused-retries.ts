import type { IncomingRecord, TopicPartition } from '../transport/port.ts';
import { partitionId } from '../transport/position.ts';

const maxTimerMs = 2 ** 31 - 1;

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
   * Per partition, records given up on (dead-lettered, forwarded) that may come again: by this member while a record
   * below them was not finished (keys in parallel: the re-fetch from that record brings them again), or found in the
   * dead letters at the partition's first batch since its assignment (their offset commit was lost in a crash or a
   * rebalance). With no dedup row they would be tried afresh. By offset: the dedup key the record must carry to be
   * passed over (a dead letter found in the database), or undefined (given up on here, in this assignment).
   */
  readonly #settledAhead = new Map<string, Map<string, string | undefined>>();
  /**
   * Partitions whose dead letters were looked up since they were assigned: to the end (undefined), or up to an offset
   * when the lookup's page was full (looked up again from there once a batch goes past it).
   */
  readonly #lookedUp = new Map<string, string | undefined>();
  readonly #keyOf: (record: IncomingRecord) => string | null;
  /** Per partition, its one pending resume (the latest due time of its lanes' backoffs). */
  readonly #timers = new Map<string, { timer: NodeJS.Timeout; due: number }>();
  /** Partitions a record stopped (`deadLetters: false`): no timer resumes them. */
  readonly #stopped = new Set<string>();

  /** `keyOf`: a record's dedup key, compared with a dead letter's found at the same coordinates. */
  constructor(keyOf: (record: IncomingRecord) => string | null) {
    this.#keyOf = keyOf;
  }

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
    const offsets = this.#settledAhead.get(key) ?? new Map<string, string | undefined>();
    this.#settledAhead.set(key, offsets.set(record.offset, undefined));
  }

  /**
   * Where `partition`'s dead letters must be looked up from before a batch of `records` is applied: its first batch
   * since it was assigned (from the batch's first record), or past the last page when the batch goes beyond it.
   * Undefined when nothing has to be looked up.
   */
  lookupFrom(partition: TopicPartition, records: readonly IncomingRecord[]): string | undefined {
    const first = records[0];
    const last = records.at(-1);
    if (!first || !last) return undefined;
    const key = PausedRetries.#key(partition);
    if (!this.#lookedUp.has(key)) return first.offset;
    const upTo = this.#lookedUp.get(key);
    if (upTo === undefined || BigInt(last.offset) <= BigInt(upTo)) return undefined;
    const next = BigInt(upTo) + 1n;
    return (next > BigInt(first.offset) ? next : BigInt(first.offset)).toString();
  }

  /**
   * The dead letters found for `partition` (offset → dedup key, in offset order): passed over when a record with that
   * key comes. `complete`: the lookup reached the end; otherwise it is continued past the last offset found.
   */
  lookedUp(partition: TopicPartition, found: ReadonlyMap<string, string>, complete = true): void {
    const key = PausedRetries.#key(partition);
    this.#lookedUp.set(key, complete ? undefined : [...found.keys()].at(-1));
    if (found.size === 0) return;
    const offsets = this.#settledAhead.get(key) ?? new Map<string, string | undefined>();
    for (const [offset, dedupKey] of found) if (!offsets.has(offset)) offsets.set(offset, dedupKey);
    this.#settledAhead.set(key, offsets);
  }

  /**
   * The assignment of `partitions` ended (revoked, its lease lost, the member closing): their attempts, records given up
   * on, lookup and "stopped" mark are forgotten (a later assignment looks the dead letters up again: another member may
   * have given up on records meanwhile, or got past the record that stopped the partition here). A pending resume
   * stays: the client keeps a partition's pause across an unassignment and a later assignment of it, and that timer is
   * what resumes it (librdkafka resets only its own pauses at an assignment). Returns the partitions that were
   * stopped: the caller resumes them while they are still assigned, for the same reason (no timer would).
   */
  forget(partitions: readonly TopicPartition[]): TopicPartition[] {
    const stopped: TopicPartition[] = [];
    for (const partition of partitions) {
      const key = PausedRetries.#key(partition);
      this.#failing.delete(key);
      this.#settledAhead.delete(key);
      this.#lookedUp.delete(key);
      if (this.#stopped.delete(key)) stopped.push({ topic: partition.topic, partition: partition.partition });
    }
    return stopped;
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
    for (const offset of offsets.keys()) if (BigInt(offset) < from) offsets.delete(offset);
    if (offsets.size === 0) this.#settledAhead.delete(PausedRetries.#key(first));
    const passed = new Set<string>();
    for (const record of records) {
      if (!offsets.has(record.offset)) continue;
      const expected = offsets.get(record.offset);
      // Found in the database: only the same event at these coordinates (a topic created again starts its offsets anew).
      if (expected === undefined || this.#keyOf(record) === expected) passed.add(record.offset);
      else offsets.delete(record.offset);
    }
    return passed;
  }

  /**
   * Resumes `partition` after `delayMs`, unless closed first. One timer per partition: several lanes backing off at
   * once resume it at the latest of their due times (an earlier one would cut the others' backoffs short), and a
   * stopped partition is never resumed by a timer.
   */
  resumeLater(partition: TopicPartition, delayMs: number, resume: () => void): void {
    const key = PausedRetries.#key(partition);
    if (this.#stopped.has(key)) return;
    // Node fires a timer of more than 2^31-1 ms at once (1 ms): never more (the partition re-checks then).
    delayMs = Math.min(Math.max(0, delayMs), maxTimerMs);
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
    this.#lookedUp.clear();
  }
}
