import type { Db } from '../db/port.ts';
import type { Event } from '../envelope/event.ts';
import type { CloseOptions } from '../lifecycle.ts';
import type { FaultInjector } from '../observability/faults.ts';
import type { Logger } from '../observability/logger.ts';
import type { IncomingRecord, TopicPartition, Transport } from '../transport/port.ts';
import type { PermanentErrors } from './classify.ts';
import type { Concurrency } from './lanes.ts';
import type { RetryTopicsOptions } from './retry-topics.ts';
import type { BatchEventHandler, EventHandler, Outcome } from './types.ts';
import type { ConsumerStats } from './watch.ts';

/** Options of `createConsumer()`; defaults are given on each field. `T`: the type of the events' `data`. */
export interface ConsumerOptions<T = unknown> {
  db: Db;
  transport: Transport;
  /** Consumer group; also the name its dedup rows are kept under. */
  group: string;
  topics: string[];
  /** Applies one fresh event in the consumer's transaction. Give this or `batchHandler`. */
  handler?: EventHandler<T>;
  /** Applies all fresh events of a batch at once (faster); a failure is bisected down to the event that fails. */
  batchHandler?: BatchEventHandler<T>;
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /** Most records applied in one database transaction (default 500). */
  maxBatchSize?: number;
  /** Where a new group starts (default true: the beginning). */
  fromBeginning?: boolean;
  /** KB of records the transport may prefetch (Kafka: `queued.max.messages.kbytes`, default 2048). */
  prefetchKb?: number;
  /** Static group membership id: a restarted process with the same id resumes its partitions at once. */
  instanceId?: string;
  /** Group session timeout (default the transport's; Kafka's minimum is 6000 ms). */
  sessionTimeoutMs?: number;
  /** In-place retry of a failing record: full-jitter backoff from `baseMs` up to `capMs` (defaults 500 ms, 30 s). */
  retry?: { baseMs?: number; capMs?: number };
  /**
   * Purge dedup rows older than `keepMs` every `everyMs` (default 60 s). Set `keepMs` to at least the topics' retention
   * (`retention.ms`) plus how long a redrive may come after: an event redelivered after its dedup row was purged is
   * applied again. Not set: nothing is purged and `processed_events` grows without bound — the consumer says so at
   * start (a warning). `false`: never purge here (you purge yourself with `purgeProcessed`), no warning.
   */
  retention?: { keepMs: number; everyMs?: number } | false;
  /**
   * Called each time partitions are assigned to this member (on Kafka after the group's rebalance): the consumer is
   * ready for them. Also logged at info (`partitions assigned`).
   */
  onAssign?: (partitions: TopicPartition[]) => void;
  logger?: Logger;
  /** Called once per event as soon as the database committed it (before the offset commit). */
  onOutcome?: (event: Event<T>, outcome: Outcome) => void;
  /**
   * Attempts in place (with full-jitter backoff) before a failing record becomes a dead letter (default 3). A
   * permanent error (undecodable record, no valid id, `PermanentError`) is dead-lettered at once.
   */
  maxAttempts?: number;
  /**
   * Errors to treat as permanent besides `PermanentError` and decode failures: classes (`instanceof`) or codes
   * (`error.code`, e.g. SQLSTATE `'23505'`). Default none: other errors are retried up to `maxAttempts`.
   */
  permanentErrors?: PermanentErrors;
  /**
   * Keep records the consumer gives up on in `dead_letters` and move past them (default true). When false, such a
   * record stops its partition with an error log and its offset stays uncommitted.
   */
  deadLetters?: boolean;
  /**
   * Called once a record is kept as a dead letter (after the database committed it). `letter.id` is the dead letter's
   * row id in `dead_letters` (what `dlq show|redrive|discard --ids` takes; undefined when that record was kept
   * already), not the event's id: that one is `eventIdOfRecord(letter.record)`.
   */
  onDeadLetter?: (letter: { id: string | undefined; record: IncomingRecord; error: unknown; attempts: number }) => void;
  /** Called when a record stops its partition (only with `deadLetters: false`). */
  onStopped?: (record: IncomingRecord, error: unknown) => void;
  /**
   * Commit offsets inside the consumer's database transaction when the transport's log lives in that same database
   * (the `postgres` transport on this Db): exactly-once inside one database. Default true where possible; false keeps
   * the separate offset commit after the database commit (duplicates then absorbed by the dedup rows).
   */
  offsetsInTransaction?: boolean;
  /**
   * Non-blocking retries (off by default: failures are retried in place). A failing record is forwarded to
   * `<topic>-retry-1..n` (delays `delaysMs`, default 1 s, 4 s, 16 s), then to `<topic>-dlt`, whose records this consumer
   * keeps in `dead_letters`; the partition moves on at once. `maxAttempts` then does not apply: a record gets one attempt
   * per topic of the chain. A retry topic's partition is paused, never slept on, until its head record is due.
   */
  retryTopics?: RetryTopicsOptions;
  /**
   * Key-ordered retries (default false): while a record of key K is in retry or dead, later records of K from the main
   * topic are parked (in `parked_records`) instead of overtaking it, and applied in order once it is applied, redriven or
   * discarded. Other keys keep flowing. Records without a key or without a valid event id never hold a key.
   */
  keyOrdered?: boolean;
  /**
   * Records of one partition applied at once (default `{ mode: 'partition' }`: in offset order, one transaction at a
   * time). `{ mode: 'key', max: N }`: records of different keys run concurrently in up to N lanes (default 16), each key
   * strictly in order, each lane in its own transaction; the committed offset never passes the lowest record not yet
   * finished. See docs/concurrency.md.
   */
  concurrency?: Concurrency;
  /** How often a key-ordered consumer looks for released holds besides right after releasing one (default 1000 ms). */
  drainIntervalMs?: number;
  /**
   * Turns a record into an event (default `decodeEvent`: CloudEvents binary or structured mode, JSON data). Pass
   * `decodeEventWith(serde)` for registry-serialized data. A permanent error makes the record a dead letter; a
   * registry that cannot be reached (`EFF_SCHEMA_REGISTRY_UNAVAILABLE`) pauses the partition until it can.
   */
  decode?: (record: IncomingRecord) => Event | Promise<Event>;
  /** Testing only: named crash points. */
  faults?: FaultInjector;
}

export interface EffectivelyConsumer {
  start(): Promise<void>;
  /**
   * Stops applying records until `resume()`: each partition is paused at its next batch (nothing of it applied) and
   * lag grows. For backpressure, e.g. while the circuit breaker of the provider this consumer feeds is open.
   */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
  /** True from a resolved `start()` until `close()`: for a liveness check. */
  isRunning(): boolean;
  /** The partitions held, events applied and duplicates passed over since start: for a readiness check or a metric. */
  stats(): ConsumerStats;
  close(options?: CloseOptions): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
