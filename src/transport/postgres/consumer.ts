import type { Db, Queryable } from '../../db/port.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { uuidv7 } from '../../envelope/uuidv7.ts';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { sleep } from '../../observability/sleep.ts';
import type {
  BatchHandler,
  Consumer,
  ConsumerOptions,
  IncomingRecord,
  TopicPartition,
  TopicPartitionOffset,
} from '../port.ts';
import { decodeHeaders } from './codec.ts';
import { Mutex } from './mutex.ts';
import type { ResolvedPostgresOptions } from './options.ts';

const files = {
  heartbeat: 'sql/heartbeat.sql',
  partitions: 'sql/partitions.sql',
  acquire: 'sql/acquire.sql',
  release: 'sql/release.sql',
  leave: 'sql/leave.sql',
  fetch: 'sql/fetch.sql',
  commit: 'sql/commit.sql',
};

interface Owned extends TopicPartition {
  /** Next offset to fetch. */
  position: bigint;
}

interface RecordRow extends Record<string, unknown> {
  offset: string;
  key: string | null;
  headers: Record<string, string>;
  value: Buffer | null;
  ts: number;
}

const keyOf = (tp: TopicPartition) => `${tp.topic}\u0000${tp.partition}`;

/**
 * A group member on the log in PostgreSQL. Members heart-beat into `log_members`; partitions are dealt round-robin
 * over the live members (ordered by id), and a member reads a partition only while it holds its lease. A member that
 * dies stops renewing: after `leaseMs` its partitions go to the others, from the group's committed offsets.
 */
export class PostgresConsumer implements Consumer {
  readonly #options: ResolvedPostgresOptions;
  readonly #consumer: ConsumerOptions;
  readonly #sql: Record<keyof typeof files, string>;
  readonly #memberId = uuidv7();
  readonly #owned = new Map<string, Owned>();
  readonly #paused = new Set<string>();
  readonly #mutex = new Mutex();
  readonly #abort = new AbortController();
  #loops: Promise<void>[] = [];
  #commits: Promise<unknown> = Promise.resolve();
  #running = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedPostgresOptions, consumer: ConsumerOptions) {
    this.#options = options;
    this.#consumer = consumer;
    this.#sql = loadSqlSet(import.meta.url, files, options.schema);
  }

  async run(handler: BatchHandler): Promise<void> {
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closed');
    if (this.#running) throw new EffectivelyError(ErrorCodes.EFF_INVALID_OPTIONS, 'run() was already called');
    this.#running = true;
    await this.#mutex.run(() => this.#rebalance());
    this.#loops = [this.#heartbeatLoop(), this.#pollLoop(handler)];
  }

  async #heartbeatLoop(): Promise<void> {
    while (!this.#abort.signal.aborted) {
      await sleep(this.#options.heartbeatMs, this.#abort.signal);
      if (this.#abort.signal.aborted) return;
      await this.#mutex.run(() => this.#rebalance()).catch(() => undefined);
    }
  }

  /** Heart-beats, then gives back the partitions no longer ours and takes the ones newly ours. */
  async #rebalance(): Promise<void> {
    const { db, leaseMs } = this.#options;
    const group = this.#consumer.group;
    const { rows: memberRows } = await db.query<{ member_id: string }>(this.#sql.heartbeat, [
      group,
      this.#memberId,
      this.#consumer.topics,
      leaseMs,
    ]);
    const members = [...new Set([...memberRows.map((row) => row.member_id), this.#memberId])].sort();
    const { rows: all } = await db.query<{ topic: string; partition: number }>(this.#sql.partitions, [
      this.#consumer.topics,
    ]);
    const index = members.indexOf(this.#memberId);
    const mine = new Map<string, TopicPartition>();
    all.forEach((tp, i) => {
      if (i % members.length === index) mine.set(keyOf(tp), { topic: tp.topic, partition: tp.partition });
    });

    const revoked = [...this.#owned.values()].filter((tp) => !mine.has(keyOf(tp)));
    if (revoked.length > 0) {
      const partitions = revoked.map(({ topic, partition }) => ({ topic, partition }));
      await this.#consumer.onRevoke?.(partitions);
      for (const tp of revoked) this.#owned.delete(keyOf(tp));
      await db.query(this.#sql.release, [
        group,
        this.#memberId,
        revoked.map((tp) => tp.topic),
        revoked.map((tp) => tp.partition),
      ]);
    }

    const assigned: TopicPartition[] = [];
    for (const [key, tp] of mine) {
      if (this.#owned.has(key)) continue;
      const { rows } = await db.query<{ committed: string | null; end_offset: string }>(this.#sql.acquire, [
        group,
        tp.topic,
        tp.partition,
        this.#memberId,
        leaseMs,
      ]);
      const lease = rows[0];
      if (!lease) continue; // still held by a member that has not let go yet; next heartbeat tries again
      const start = lease.committed ?? (this.#consumer.fromBeginning ? '0' : lease.end_offset);
      this.#owned.set(key, { ...tp, position: BigInt(start) });
      assigned.push(tp);
    }
    if (assigned.length > 0) this.#consumer.onAssign?.(assigned);
  }

  async #pollLoop(handler: BatchHandler): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let progressed = false;
      for (const key of [...this.#owned.keys()]) {
        if (signal.aborted) return;
        if (this.#paused.has(key)) continue;
        const moved = await this.#mutex.run(() => this.#pollPartition(key, handler)).catch(() => false);
        progressed ||= moved;
      }
      // Idle, or batches handed back unresolved (a handler retrying later): wait, never spin. PGlite answers without
      // real I/O, so a loop that never sleeps would starve this process's timers.
      if (progressed) await new Promise((resolve) => setImmediate(resolve));
      else await sleep(this.#options.pollIntervalMs, signal);
    }
  }

  /** One batch of one partition; resolves true when the partition's position moved. */
  async #pollPartition(key: string, handler: BatchHandler): Promise<boolean> {
    const owned = this.#owned.get(key);
    if (!owned || this.#paused.has(key) || this.#abort.signal.aborted) return false;
    const { rows } = await this.#options.db.query<RecordRow>(this.#sql.fetch, [
      owned.topic,
      owned.partition,
      owned.position.toString(),
      this.#consumer.maxBatchSize,
    ]);
    if (rows.length === 0) return false;
    const positionBefore = owned.position;
    const records: IncomingRecord[] = rows.map((row) => ({
      topic: owned.topic,
      partition: owned.partition,
      offset: row.offset,
      key: row.key === null ? null : Buffer.from(row.key),
      value: row.value,
      headers: decodeHeaders(row.headers),
      timestamp: Number(row.ts),
    }));
    let resolved: bigint | undefined;
    try {
      await handler(
        { topic: owned.topic, partition: owned.partition, records },
        {
          resolve: (offset) => {
            resolved = BigInt(offset);
          },
          pause: () => this.#paused.add(key),
          signal: this.#abort.signal,
        },
      );
    } finally {
      // Unresolved records are fetched again; a seek() made during the batch wins.
      if (owned.position === positionBefore && resolved !== undefined) owned.position = resolved + 1n;
    }
    return owned.position !== positionBefore;
  }

  commit(offsets: TopicPartitionOffset[]): Promise<void> {
    const commit = this.#commits.then(() => this.#commitWith(this.#options.db, offsets));
    this.#commits = commit.catch(() => undefined);
    return commit;
  }

  /** Commits offsets inside the caller's transaction on the log's database: the effect and the offset, one commit. */
  async commitWithin(tx: Queryable, offsets: TopicPartitionOffset[]): Promise<void> {
    await this.#commitWith(tx, offsets);
  }

  usesDb(db: Db): boolean {
    return db === this.#options.db;
  }

  async #commitWith(queryable: Queryable, offsets: TopicPartitionOffset[]): Promise<void> {
    for (const { topic, partition, offset } of offsets) {
      const result = await queryable.query(this.#sql.commit, [
        this.#consumer.group,
        topic,
        partition,
        offset,
        this.#memberId,
      ]);
      if ((result.rowCount ?? 0) === 0) {
        throw new EffectivelyError(
          ErrorCodes.EFF_TRANSPORT,
          `offset commit refused: this member no longer holds ${topic}[${partition}]`,
          { retryable: true },
        );
      }
    }
  }

  pause(partitions: TopicPartition[]): void {
    for (const tp of partitions) this.#paused.add(keyOf(tp));
  }

  resume(partitions: TopicPartition[]): void {
    for (const tp of partitions) this.#paused.delete(keyOf(tp));
  }

  seek(position: TopicPartitionOffset): void {
    const owned = this.#owned.get(keyOf(position));
    if (owned) owned.position = BigInt(position.offset);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort(new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closing'));
      await Promise.all(this.#loops);
      await this.#commits;
      // Waits for an in-flight batch, then leaves: the others take the partitions without waiting for the lease.
      await this.#mutex
        .run(() => this.#options.db.query(this.#sql.leave, [this.#consumer.group, this.#memberId]))
        .catch(() => undefined);
      this.#owned.clear();
    })();
    return this.#closing;
  }
}
