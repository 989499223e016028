// The relay's public options and handle, shared by the poller (relay.ts) and the reader of the write-ahead log
// (wal/wal-relay.ts).
import type { Db } from '../db/port.ts';
import type { CloseOptions } from '../lifecycle.ts';
import type { FaultInjector } from '../observability/faults.ts';
import type { Logger } from '../observability/logger.ts';
import type { Producer } from '../transport/port.ts';
import type { RelayStats } from './relay-stats.ts';
import type { RefusedEvent } from './set-aside.ts';

export interface RelayOptions {
  db: Db;
  /**
   * Where the relay reads the outbox: `poll` (the default) reads and deletes the table's rows; `wal` streams its
   * inserts from PostgreSQL's write-ahead log through a logical replication slot, in commit order (see `wal`).
   */
  source?: 'poll' | 'wal';
  /** Settings of `source: 'wal'`. */
  wal?: WalOptions;
  /**
   * Makes the relay's idempotent producer (e.g. `() => transport.producer()`), and a new one when it fails fatally
   * (a fenced producer, librdkafka's fatal error): without it the relay cannot recover until restarted.
   */
  producerFactory?: () => Producer;
  /** A producer to start with (kept for compatibility; prefer `producerFactory`). The relay connects and closes it. */
  producer?: Producer;
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /**
   * Key shards; must equal the outbox's `shards` (default 16). Stored in the schema at the first relay start; a relay
   * with another count (or one that finds rows of a higher shard) is refused with EFF_INVALID_OPTIONS.
   */
  shards?: number;
  /** Most rows read and sent at once (default 1000). */
  batchSize?: number;
  /**
   * About the most payload bytes in one chunk (default 32 MiB): rows are taken while the chunk holds less, so a chunk
   * of large rows stays within the Kafka client's local queue (`queue.buffering.max.kbytes`) and the embedded log's
   * parameter size. A single row larger than this still goes, alone.
   */
  batchBytes?: number;
  /**
   * The topics' `max.message.bytes` (default 1,048,588, Kafka's default): one number for every topic, or one per topic
   * with `'*'` for the others. A row whose record may be over its topic's limit is sent without the later rows of its
   * key, so a refusal for its size never lets them reach the topic ahead of it (the Kafka client cannot read a topic's
   * configuration; a lower limit is learned from the first row the broker refuses as too large). Give the lowest
   * limit of your topics when it is below Kafka's default.
   */
  maxMessageBytes?: number | Readonly<Record<string, number>>;
  /** Most chunks of `batchSize` per pass, the next read while the previous is sent (default 4). */
  chunksPerPass?: number;
  /** Fallback poll when no NOTIFY arrives (default 250 ms). */
  pollIntervalMs?: number;
  /** Wait after a failed pass before the next (default 1000 ms). */
  errorBackoffMs?: number;
  /**
   * A pass still running after this many ms is logged as a warning, and again at each further interval (default
   * 60,000): a pass waiting on a silent connection or a stalled broker says so instead of hanging without a word.
   */
  passWarnMs?: number;
  /** Listen for the outbox's NOTIFY (default true when the Db supports it). */
  listen?: boolean;
  logger?: Logger;
  /** Called after rows were acknowledged by the broker and deleted. */
  onPublished?: (count: number) => void;
  /**
   * Called for each row the transport refused for good (too large for its topic, invalid or missing topic...), once
   * it is set aside in `outbox_refused` (logged as an error too): alert on it. Later rows of its key wait until the
   * row is retried (`retryRefused`) or discarded (`discardRefused`).
   */
  onRefused?: (refused: RefusedEvent) => void;
  /** Testing only: named crash points. */
  faults?: FaultInjector;
}

export interface Relay {
  start(): Promise<void>;
  /** Publishes until the outbox is empty (or `timeoutMs` passes); returns how many rows it published. */
  drain(timeoutMs?: number): Promise<number>;
  /** True from a resolved `start()` until `close()`: for a liveness check. */
  isRunning(): boolean;
  /** Published, refused and overtaken since start, and failing passes in a row (0 when healthy): for a readiness check. */
  stats(): RelayStats;
  close(options?: CloseOptions): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface WalOptions {
  /**
   * The server to stream from, as a connection string (default: the `DATABASE_URL` environment variable, else
   * postgres://postgres@127.0.0.1:5432/postgres). The same database as `db`; its role needs REPLICATION.
   */
  connectionString?: string;
  /** The replication slot (default `effectively_outbox_<schema>`); one relay streams from it at a time. */
  slot?: string;
  /**
   * `poll`: when the server cannot do logical replication (wal_level not logical, no REPLICATION attribute), run the
   * poller instead, with a warning. Without it such a server fails `start()` with EFF_WAL_UNAVAILABLE.
   */
  fallback?: 'poll';
  /** A slot that holds more WAL than this (bytes, default 1 GiB) is logged as a warning at start and while running. */
  slotWarnBytes?: number;
  /**
   * Testing only, the naive reader's mistakes (naive twins): `confirm-on-receipt` confirms each transaction as soon as
   * it is received; `resume-from-received` streams again, after a lost connection, from the last transaction received
   * instead of the slot's confirmed position; `send-beside-key-in-flight` sends a batch while an earlier send holding
   * one of its keys still waits for the broker; `send-after-failed-send` goes on sending after a send failed, until
   * that failure's turn to settle; `drain-before-counted` lets `drain()` return once the table is empty, while the last
   * rows deleted are not yet counted.
   */
  unsafe?:
    | 'confirm-on-receipt'
    | 'resume-from-received'
    | 'send-beside-key-in-flight'
    | 'send-after-failed-send'
    | 'drain-before-counted';
}
