import type { Db, Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { PermanentError } from '../errors.ts';
import type { IncomingRecord, TopicPartition } from '../transport/port.ts';
import { partitionId } from '../transport/position.ts';

const files = { begin: 'started-begin.sql', done: 'started-done.sql', below: 'started-below.sql' };

/**
 * Attempts that outlive the process. The first batch of a partition since its assignment counts a start of its first
 * record in the database (one statement per assignment). When that record was started before and never finished (the
 * process died in the batch, or the partition moved before it ended), the partition is *careful* for its next
 * `budget` records: each is applied alone in its transaction, its start counted (committed) before its handler runs,
 * and a record started alone more than `maxAttempts` times is given up on without calling the handler again (only a
 * start alone pins a death on the record: the batch's other records are innocent). A count goes in the transaction
 * that applies (or gives up on) its record. Per assignment: `forget` at every end of one.
 */
export class StartedRecords {
  readonly #db: Db;
  readonly #group: string;
  readonly #maxAttempts: number;
  readonly #budget: number;
  readonly #sql: Record<keyof typeof files, string>;
  /** Per partition counted since its assignment: how many records are still to be applied carefully. */
  readonly #careful = new Map<string, number>();
  /** Per partition, offsets this assignment counted a start of and has not finished. */
  readonly #counted = new Map<string, Set<string>>();
  /** Per partition, offsets this assignment counted a start alone of and has not finished. */
  readonly #alone = new Map<string, Set<string>>();

  /** `budget`: records applied carefully after a death (the largest batch that can have held the culprit). */
  constructor(db: Db, options: { group: string; schema: string; maxAttempts: number; budget: number }) {
    this.#db = db;
    this.#group = options.group;
    this.#maxAttempts = options.maxAttempts;
    this.#budget = options.budget;
    this.#sql = loadSqlSet(import.meta.url, files, options.schema);
  }

  /** At each batch, from its first record to apply: whether `partition` is applied record by record now. */
  async careful(first: IncomingRecord): Promise<boolean> {
    const key = partitionId(first);
    const left = this.#careful.get(key);
    if (left !== undefined) return left > 0;
    await this.#db.query(this.#sql.below, [this.#group, first.topic, first.partition, first.offset]);
    const { starts } = await this.#begin(first, false);
    this.#careful.set(key, starts > 1 ? this.#budget : 0);
    return starts > 1;
  }

  /**
   * Before a careful record's handler: counts its start alone (committed). Returns the error it is given up on with
   * when it was started alone more than `maxAttempts` times, else undefined (run it).
   */
  async startAlone(record: IncomingRecord): Promise<PermanentError | undefined> {
    const key = partitionId(record);
    // Started alone before by this assignment and not finished: this is a retry in the same process (an outage, a
    // contention, a failure counted in memory), not a death. Counted once: a silent connection or a lock wait retried
    // three times would otherwise give the record up as a killer (the chaos kit's lost event, issue 35).
    if (this.#alone.get(key)?.has(record.offset)) return undefined;
    this.#careful.set(key, Math.max(0, (this.#careful.get(key) ?? 1) - 1));
    const { alone } = await this.#begin(record, true);
    this.#alone.set(key, (this.#alone.get(key) ?? new Set<string>()).add(record.offset));
    if (alone <= this.#maxAttempts) return undefined;
    return new PermanentError(
      `started alone ${alone - 1} times without finishing (the process died or the partition moved before the handler returned); not tried again`,
    );
  }

  async #begin(record: IncomingRecord, alone: boolean): Promise<{ starts: number; alone: number }> {
    const args = [this.#group, record.topic, record.partition, record.offset, alone];
    const { rows } = await this.#db.query<{ starts: number; alone: number }>(this.#sql.begin, args);
    const key = partitionId(record);
    const offsets = this.#counted.get(key) ?? new Set<string>();
    this.#counted.set(key, offsets.add(record.offset));
    return rows[0]!;
  }

  /** In the transaction that applies or gives up on `records` (one partition's): their counted starts go with it. */
  async finishIn(tx: Queryable, records: readonly IncomingRecord[]): Promise<void> {
    const first = records[0];
    const counted = first && this.#counted.get(partitionId(first));
    if (!first || !counted) return;
    const offsets = records.filter((record) => counted.has(record.offset)).map((record) => record.offset);
    if (offsets.length === 0) return;
    await tx.query(this.#sql.done, [this.#group, first.topic, first.partition, offsets]);
  }

  /** `records` committed (applied or given up on): no longer counted by this assignment. */
  finished(records: readonly IncomingRecord[]): void {
    for (const record of records) {
      this.#counted.get(partitionId(record))?.delete(record.offset);
      this.#alone.get(partitionId(record))?.delete(record.offset);
    }
  }

  /** The assignment of `partitions` ended: counted again at the next one. */
  forget(partitions: readonly TopicPartition[]): void {
    for (const partition of partitions) {
      const key = partitionId(partition);
      this.#careful.delete(key);
      this.#counted.delete(key);
      this.#alone.delete(key);
    }
  }

  close(): void {
    this.#careful.clear();
    this.#counted.clear();
    this.#alone.clear();
  }
}
