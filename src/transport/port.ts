import type { Db, Queryable } from '../db/port.ts';

/**
 * The small Kafka-shaped port every transport implements. Nothing above `transport/` sees a client library.
 * Offsets are decimal strings (Kafka offsets are 64-bit).
 */

export type Headers = Record<string, Buffer>;

export interface OutgoingRecord {
  topic: string;
  /** Text, or bytes for a record that came with a key that is not text (forwarded or redriven as it came). */
  key: string | Buffer | null;
  value: Buffer | null;
  headers: Record<string, string | Buffer>;
}

export interface IncomingRecord {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Headers;
  /** Broker timestamp, ms since epoch. */
  timestamp: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface TopicPartitionOffset extends TopicPartition {
  /** The next offset to read (last processed + 1). */
  offset: string;
}

export interface Producer {
  connect(): Promise<void>;
  /** Resolves once the broker acknowledged every record (acks=all, idempotent). Order per key is kept. */
  send(records: readonly OutgoingRecord[]): Promise<void>;
  /**
   * Kafka→Kafka: sends records and commits `consumer`'s offsets in one Kafka transaction (all or nothing; the
   * consumer's group fences zombies). Needs a producer made with a `transactionalId` and a consumer of the same
   * transport. A failure aborts the transaction (none of it is visible, the offsets do not move) and throws
   * `EFF_TRANSPORT` (retryable); a producer it left unusable (fenced by another instance with the same id, or its
   * abort failed) is replaced by a new one with the same transactional id first (`details.replaced`), so the retry
   * can commit.
   */
  sendInTransaction?(
    records: readonly OutgoingRecord[],
    offsets: TopicPartitionOffset[],
    consumer: Consumer,
  ): Promise<void>;
  /**
   * Transports that live in a database: appends inside the caller's transaction on that same database, so the relay
   * moves outbox rows into the log in one commit. `usesDb` tells whether `db` is that database.
   */
  sendWithin?(tx: Queryable, records: readonly OutgoingRecord[]): Promise<void>;
  usesDb?(db: Db): boolean;
  close(): Promise<void>;
}

export interface Batch {
  topic: string;
  partition: number;
  records: IncomingRecord[];
}

export interface BatchControl {
  /** Marks records up to and including `offset` as handled: the batch ends there and the rest is fetched again. */
  resolve(offset: string): void;
  /** Pauses this batch's partition (the rest of the batch is fetched again after resume). */
  pause(): void;
  /** Aborted when the consumer stops or the partition is revoked. */
  signal: AbortSignal;
}

export type BatchHandler = (batch: Batch, control: BatchControl) => Promise<void>;

export interface ConsumerOptions {
  group: string;
  topics: string[];
  /** Most records handed to one batch. */
  maxBatchSize: number;
  /** Where a group with no committed offset starts. */
  fromBeginning: boolean;
  /** Records prefetched ahead of the handler, in KB (Kafka default here 2048): more is faster and bigger. */
  prefetchKb?: number;
  /** Longest wait for new records in one fetch (Kafka's `fetch.wait.max.ms`; default 25 ms). */
  maxWaitMs?: number;
  /** Static membership: a restarted member with the same id takes its partitions back without a rebalance. */
  instanceId?: string;
  /** How long the group waits for a silent member before moving its partitions (Kafka's minimum is 6000 ms). */
  sessionTimeoutMs?: number;
  /**
   * Batches of different partitions in flight at once (default 1): each assigned partition has a worker of its own,
   * batches of one partition stay one at a time and in order. A revocation waits for the revoked partitions' batches
   * only.
   */
  partitionsInFlight?: number;
  onAssign?: (partitions: TopicPartition[]) => void;
  /**
   * Called when partitions' assignment ends, after their batches in flight: before they go at a revoke, or once a lost
   * lease dropped them (the embedded log); the transport waits for the returned promise.
   */
  onRevoke?: (partitions: TopicPartition[]) => Promise<void>;
}

export interface Consumer {
  run(handler: BatchHandler): Promise<void>;
  /**
   * Commits offsets to the group: only ever for work the database already committed. Commits are applied in call
   * order; `close()` waits for the pending ones.
   */
  commit(offsets: TopicPartitionOffset[]): Promise<void>;
  /**
   * Transports that live in a database: commits offsets inside the caller's transaction on that same database, so
   * consuming, applying and committing the offset are one commit (exactly-once inside one database).
   */
  commitWithin?(tx: Queryable, offsets: TopicPartitionOffset[]): Promise<void>;
  usesDb?(db: Db): boolean;
  /**
   * Stops fetching `partitions` until `resume`. Safe from inside a partition's own batch (`BatchControl.pause`), or
   * for partitions with no batch in flight whose records were all resolved. On Kafka a pause from elsewhere loses
   * records: the client drops what it read ahead for the partition and seeks back only partitions it knows a resolved
   * offset of (measured: 260-300 of 660 records skipped; docs/dev/development.md). The consumer pauses only from its batch.
   */
  pause(partitions: TopicPartition[]): void;
  resume(partitions: TopicPartition[]): void;
  seek(position: TopicPartitionOffset): void;
  /** Stops fetching, waits for the batch in flight and the pending commits, then leaves the group. */
  close(): Promise<void>;
}

export interface TopicSpec {
  topic: string;
  partitions: number;
}

export interface Admin {
  createTopics(topics: TopicSpec[]): Promise<void>;
  /** The names of the topics that exist. */
  listTopics(): Promise<string[]>;
  deleteTopics(topics: string[]): Promise<void>;
  /** Committed offsets of a group for a topic (-1 when none). */
  committedOffsets(group: string, topic: string): Promise<TopicPartitionOffset[]>;
  /** High watermarks (next offset to be written) per partition. */
  endOffsets(topic: string): Promise<TopicPartitionOffset[]>;
  close(): Promise<void>;
}

export interface Transport {
  readonly name: string;
  producer(options?: { clientId?: string; transactionalId?: string }): Producer;
  consumer(options: ConsumerOptions): Consumer;
  admin(): Admin;
}

/**
 * What one record of a failed `send` became, when the transport knows it record by record (the Kafka transport: the
 * broker's delivery report of each record). A failed send carries them in `details.outcomes` of its `EFF_TRANSPORT`
 * error, one per record in the order given; a transport that refuses a send as a whole (the embedded log writes
 * nothing of it) carries none.
 */
export type SendOutcome = { acknowledged: true } | { acknowledged: false; error: unknown };
