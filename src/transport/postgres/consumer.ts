import { setMaxListeners } from 'node:events';
import type { Db, Queryable } from '../../db/port.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { uuidv7 } from '../../envelope/uuidv7.ts';
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import { errorFields } from '../../observability/logger.ts';
import { sleep } from '../../observability/sleep.ts';
import type {
  BatchHandler,
  Consumer,
  ConsumerOptions,
  IncomingRecord,
  TopicPartition,
  TopicPartitionOffset,
} from '../port.ts';
import { keyOf, shareOf } from './assignment.ts';
import { decodeHeaders } from './codec.ts';
import { linked } from './linked.ts';
import type { ResolvedPostgresOptions } from './options.ts';
import { Slots } from './slots.ts';

const files = {
  heartbeat: 'sql/heartbeat.sql',
  acquire: 'sql/acquire.sql',
  release: 'sql/release.sql',
  leave: 'sql/leave.sql',
  fetch: 'sql/fetch.sql',
  commit: 'sql/commit.sql',
};

interface Owned extends TopicPartition {
  /** Next offset to fetch. */
  position: bigint;
  /** Aborted when another member took the partition's lease: the batch in flight stops and commits nothing. */
  readonly lost: AbortController;
  /** Aborted when the partition is given back or lost: its worker takes no new batch (the one in flight finishes). */
  readonly stop: AbortController;
  /** The partition's worker: its loop of batches, over once the partition is given back, lost, or the member closes. */
  worker: Promise<void>;
}

interface HeartbeatRow extends Record<string, unknown> {
  members: string[];
  partitions: TopicPartition[];
  held: TopicPartition[];
}

interface RecordRow extends Record<string, unknown> {
  offset: string;
  key: string | null;
  headers: Record<string, string>;
  value: Buffer | null;
  ts: number;
}

/** The error of a commit (or a batch) of a partition whose lease another member holds now: nobody's record failure. */
function leaseLost(group: string, tp: TopicPartition): EffectivelyError {
  return new EffectivelyError(
    ErrorCodes.EFF_LEASE_LOST,
    `lease lost: another member of group ${group} holds ${tp.topic}[${tp.partition}] now; this member committed nothing of it`,
    { retryable: true, details: { leaseLost: true, topic: tp.topic, partition: tp.partition } },
  );
}

/**
 * A group member on the log in PostgreSQL. Members heart-beat into `log_members` on a timer of their own, never behind a
 * batch (on a server the heartbeat takes another connection of the pool while a batch runs); partitions are dealt
 * round-robin over the live members, and a member reads a partition only while it holds its lease. Committing an offset
 * checks and extends the lease in one statement, so a batch longer than the lease still commits when nobody took the
 * partition meanwhile (on PGlite, one session, nobody can while the batch's transaction holds it). A partition whose
 * lease another member took is dropped as soon as a heartbeat or a refused commit shows it (`EFF_LEASE_LOST`); the
 * member goes on heart-beating and takes what the deal gives it again. A member that dies stops renewing: after
 * `leaseMs` its partitions go to the others, from the group's committed offsets.
 */
export class PostgresConsumer implements Consumer {
  readonly #options: ResolvedPostgresOptions;
  readonly #consumer: ConsumerOptions;
  readonly #sql: Record<keyof typeof files, string>;
  readonly #memberId = uuidv7();
  readonly #owned = new Map<string, Owned>();
  readonly #paused = new Set<string>();
  readonly #abort = new AbortController();
  /** Batches of different partitions in flight at once (`partitionsInFlight`). */
  readonly #slots: Slots;
  /** Every worker not over yet, lost partitions' included (close waits for their batches in flight). */
  readonly #workers = new Set<Promise<void>>();
  /**
   * Lost partitions whose assignment is still ending: their batch in flight, then the same forgetting as a revoke
   * (`onRevoke`). Not taken again before that is over.
   */
  readonly #ending = new Map<string, Promise<void>>();
  /** Stops the heartbeats, only once the batch in flight is over (a closing member keeps its leases until it leaves). */
  readonly #stopBeats = new AbortController();
  /** This member's share at the last heartbeat, applied by the poll loop between batches. */
  #wanted: Map<string, TopicPartition> | undefined;
  #poll: Promise<void> = Promise.resolve();
  #beats: Promise<void> = Promise.resolve();
  #commits: Promise<unknown> = Promise.resolve();
  #running = false;
  #closing: Promise<void> | undefined;

  constructor(options: ResolvedPostgresOptions, consumer: ConsumerOptions) {
    this.#options = options;
    this.#consumer = consumer;
    this.#sql = loadSqlSet(import.meta.url, files, options.schema);
    const inFlight = consumer.partitionsInFlight ?? 1;
    if (!Number.isInteger(inFlight) || inFlight < 1) throw invalidOptions('partitionsInFlight', 'a positive integer');
    this.#slots = new Slots(inFlight);
    // Every partition worker and batch links to the member's signal (and unlinks when done): with more than ten
    // partitions that is more than ten listeners at once by design, not a leak, so Node's warning is turned off here.
    setMaxListeners(0, this.#abort.signal);
  }

  async run(handler: BatchHandler): Promise<void> {
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closed');
    if (this.#running) throw new EffectivelyError(ErrorCodes.EFF_INVALID_OPTIONS, 'run() was already called');
    this.#running = true;
    await this.#heartbeat();
    await this.#rebalance(handler);
    this.#beats = this.#heartbeatLoop();
    this.#poll = this.#assignLoop(handler);
  }

  /** Liveness never waits on user code: this loop shares nothing with the batches but the database. */
  async #heartbeatLoop(): Promise<void> {
    const signal = this.#stopBeats.signal;
    while (!signal.aborted) {
      await sleep(this.#options.heartbeatMs, signal);
      if (signal.aborted) return;
      await this.#heartbeat().catch((error: unknown) =>
        this.#options.logger.debug('heartbeat failed; the next one tries again', errorFields(error)),
      );
    }
  }

  /**
   * Renews this member and its leases; drops the partitions whose lease is no longer its own; notes this member's share
   * for the poll loop. Only partitions taken before the statement started are judged (it cannot see later ones).
   */
  async #heartbeat(): Promise<void> {
    const before = new Map(this.#owned);
    const { rows } = await this.#options.db.query<HeartbeatRow>(this.#sql.heartbeat, [
      this.#consumer.group,
      this.#memberId,
      this.#consumer.topics,
      this.#options.leaseMs,
    ]);
    const row = rows[0]!;
    const held = new Set(row.held.map(keyOf));
    for (const [key, owned] of before) if (!held.has(key)) this.#lose(key, owned);
    this.#wanted = shareOf(this.#memberId, row.members, row.partitions);
  }

  /** Another member holds the partition now: stop reading it, abort its batch in flight, commit nothing of it. */
  #lose(key: string, owned: Owned): EffectivelyError {
    const error = leaseLost(this.#consumer.group, owned);
    if (this.#owned.get(key) !== owned) return error;
    this.#owned.delete(key);
    this.#paused.delete(key);
    owned.stop.abort(error);
    owned.lost.abort(error);
    // The assignment ended: per-partition state of the consumer (attempts, records given up on, the dead-letter lookup,
    // a stop) must end with it, as at a revoke, once the batch in flight is over and before the partition is taken again.
    const tp = { topic: owned.topic, partition: owned.partition };
    const ending: Promise<void> = owned.worker
      .then(() => this.#consumer.onRevoke?.([tp]))
      .catch((failure: unknown) =>
        this.#options.logger.warn('onRevoke failed for a lost partition', errorFields(failure)),
      )
      .finally(() => {
        if (this.#ending.get(key) === ending) this.#ending.delete(key);
      });
    this.#ending.set(key, ending);
    this.#options.logger.warn('lease lost: another member holds the partition now; dropped it', {
      group: this.#consumer.group,
      topic: owned.topic,
      partition: owned.partition,
    });
    return error;
  }

  /**
   * Gives back the partitions no longer this member's share, each once its own batch in flight is over (the other
   * partitions' batches go on), and takes the ones newly its share, each with a worker of its own. What cannot be taken
   * yet (its holder has not let go) or failed is tried again after the next heartbeat.
   */
  async #rebalance(handler: BatchHandler): Promise<void> {
    const mine = this.#wanted;
    if (!mine) return;
    this.#wanted = undefined;
    const { db, leaseMs } = this.#options;
    const group = this.#consumer.group;
    const revoked = [...this.#owned.entries()].filter(([key]) => !mine.has(key));
    if (revoked.length > 0) {
      const partitions = revoked.map(([, { topic, partition }]) => ({ topic, partition }));
      for (const [, owned] of revoked) owned.stop.abort();
      await Promise.all(revoked.map(([, owned]) => owned.worker));
      await this.#consumer.onRevoke?.(partitions);
      for (const [key] of revoked) {
        this.#owned.delete(key);
        this.#paused.delete(key);
      }
      await db.query(this.#sql.release, [
        group,
        this.#memberId,
        partitions.map((tp) => tp.topic),
        partitions.map((tp) => tp.partition),
      ]);
    }

    const assigned: TopicPartition[] = [];
    for (const [key, tp] of mine) {
      if (this.#owned.has(key) || this.#ending.has(key)) continue;
      const { rows } = await db.query<{ committed: string | null; end_offset: string }>(this.#sql.acquire, [
        group,
        tp.topic,
        tp.partition,
        this.#memberId,
        leaseMs,
      ]);
      const lease = rows[0];
      if (!lease) continue;
      const start = lease.committed ?? (this.#consumer.fromBeginning ? '0' : lease.end_offset);
      const owned: Owned = {
        ...tp,
        position: BigInt(start),
        lost: new AbortController(),
        stop: new AbortController(),
        worker: Promise.resolve(),
      };
      this.#owned.set(key, owned);
      owned.worker = this.#work(key, owned, handler);
      this.#workers.add(owned.worker);
      void owned.worker.finally(() => this.#workers.delete(owned.worker));
      assigned.push(tp);
    }
    if (assigned.length > 0) this.#consumer.onAssign?.(assigned);
  }

  /** Deals partitions out at each heartbeat's share until the member closes; then waits for every worker. */
  async #assignLoop(handler: BatchHandler): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      await this.#rebalance(handler).catch((error: unknown) =>
        this.#options.logger.debug('rebalance failed; the next heartbeat tries again', errorFields(error)),
      );
      await sleep(this.#options.pollIntervalMs, signal);
    }
    await Promise.all([...this.#workers]);
  }

  /**
   * One partition's worker: its batches one after the other, each in a slot of the member's bounded pool, until the
   * partition is given back or lost or the member closes (the batch in flight always finishes first).
   */
  async #work(key: string, owned: Owned, handler: BatchHandler): Promise<void> {
    const stop = linked([this.#abort.signal, owned.stop.signal]);
    try {
      while (!stop.signal.aborted && this.#owned.get(key) === owned) {
        if (this.#paused.has(key)) {
          await sleep(this.#options.pollIntervalMs, stop.signal);
          continue;
        }
        const release = await this.#slots.take(stop.signal);
        if (!release) return;
        let moved = false;
        try {
          if (!stop.signal.aborted && this.#owned.get(key) === owned) {
            moved = await this.#pollPartition(key, owned, handler).catch(() => false);
          }
        } finally {
          release();
        }
        // Idle, or a batch handed back unresolved (a handler retrying later): wait, never spin. PGlite answers without
        // real I/O, so a loop that never sleeps would starve this process's timers.
        if (moved) await new Promise((resolve) => setImmediate(resolve));
        else await sleep(this.#options.pollIntervalMs, stop.signal);
      }
    } finally {
      stop.dispose();
    }
  }

  /** One batch of one partition; resolves true when the partition's position moved. */
  async #pollPartition(key: string, owned: Owned, handler: BatchHandler): Promise<boolean> {
    const { rows } = await this.#options.db.query<RecordRow>(this.#sql.fetch, [
      owned.topic,
      owned.partition,
      owned.position.toString(),
      this.#consumer.maxBatchSize,
      this.#consumer.group,
      this.#memberId,
    ]);
    if (rows.length === 0 || this.#owned.get(key) !== owned || this.#paused.has(key)) return false;
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
    const batchSignal = linked([this.#abort.signal, owned.lost.signal]);
    try {
      await handler(
        { topic: owned.topic, partition: owned.partition, records },
        {
          resolve: (offset) => {
            resolved = BigInt(offset);
          },
          // A partition lost meanwhile is not paused: whoever holds it next decides.
          pause: () => {
            if (this.#owned.get(key) === owned) this.#paused.add(key);
          },
          signal: batchSignal.signal,
        },
      );
    } finally {
      batchSignal.dispose();
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

  /**
   * Commits offsets inside the caller's transaction on the log's database: the effect and the offset, one commit. Throws
   * `EFF_LEASE_LOST` when another member holds the partition now (the caller's transaction must roll back).
   */
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
        this.#options.leaseMs,
      ]);
      if ((result.rowCount ?? 0) === 0) {
        const key = keyOf({ topic, partition });
        const owned = this.#owned.get(key);
        throw owned ? this.#lose(key, owned) : leaseLost(this.#consumer.group, { topic, partition });
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
      // The workers end after their batches in flight, heart-beating meanwhile; then the heartbeats stop.
      await this.#poll;
      this.#stopBeats.abort();
      await this.#beats;
      await this.#commits;
      await Promise.all(this.#ending.values());
      // Then leaves: the others take the partitions without waiting for the lease.
      await this.#options.db.query(this.#sql.leave, [this.#consumer.group, this.#memberId]).catch(() => undefined);
      this.#owned.clear();
    })();
    return this.#closing;
  }
}
