import type { IncomingRecord, TopicPartitionOffset } from '../transport/port.ts';

/**
 * How far a batch of one partition has come when its records finish out of offset order (keys in parallel): the
 * position to commit is the lowest record not yet finished, never the highest finished one. A crash then redelivers
 * the finished records above that gap (the dedup rows absorb them) and never skips the unfinished one.
 *
 * Only the records this consumer must finish are tracked (decoded records, a poison record, a record of another group
 * moved over); untracked records between them (another group's, in a shared retry topic) go with the next position.
 */
export class Progress {
  readonly #topic: string;
  readonly #partition: number;
  readonly #offsets: bigint[];
  readonly #done: boolean[];
  /** Index of the first tracked record not finished. */
  #low = 0;
  readonly #onAdvance: (resolveThrough: string, position: TopicPartitionOffset) => void;

  /**
   * `tracked`: the batch's records to finish, in offset order. `onAdvance` is called each time the lowest unfinished
   * record moves: with the offset handled through (to resolve) and the position to commit.
   */
  constructor(
    tp: { topic: string; partition: number },
    tracked: readonly IncomingRecord[],
    onAdvance: (resolveThrough: string, position: TopicPartitionOffset) => void,
  ) {
    this.#topic = tp.topic;
    this.#partition = tp.partition;
    this.#offsets = tracked.map((record) => BigInt(record.offset));
    this.#done = tracked.map(() => false);
    this.#onAdvance = onAdvance;
  }

  /** The position to commit once `records` are finished too (inside their own transaction). */
  positionWith(records: readonly IncomingRecord[]): TopicPartitionOffset {
    const also = new Set(records.map((record) => BigInt(record.offset)));
    let index = this.#low;
    while (index < this.#offsets.length && (this.#done[index] || also.has(this.#offsets[index]!))) index += 1;
    return this.#position(index);
  }

  /** The position to commit now: the lowest tracked record not finished (or past the last one). */
  position(): TopicPartitionOffset {
    return this.#position(this.#low);
  }

  /** `records` are finished (their database transaction committed): moves the position as far as it can go. */
  finished(records: readonly IncomingRecord[]): void {
    for (const record of records) {
      const index = this.#indexOf(BigInt(record.offset));
      if (index >= 0) this.#done[index] = true;
    }
    const before = this.#low;
    while (this.#low < this.#offsets.length && this.#done[this.#low]) this.#low += 1;
    if (this.#low === before) return;
    const position = this.#position(this.#low);
    this.#onAdvance((BigInt(position.offset) - 1n).toString(), position);
  }

  #position(index: number): TopicPartitionOffset {
    const offset = index < this.#offsets.length ? this.#offsets[index]! : this.#offsets.at(-1)! + 1n;
    return { topic: this.#topic, partition: this.#partition, offset: offset.toString() };
  }

  #indexOf(offset: bigint): number {
    let lo = 0;
    let hi = this.#offsets.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.#offsets[mid]!;
      if (at === offset) return mid;
      if (at < offset) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
