import type { PermanentErrors } from '../consumer/classify.ts';
import type { Logger } from '../observability/logger.ts';
import type { KafkaTransportOptions } from '../transport/kafka/config.ts';
import type { IncomingRecord } from '../transport/port.ts';

/** One input record, as read (read_committed) from a `from` topic. */
export type PipelineRecord = IncomingRecord;

/** One record the transform emits. */
export interface PipelineOutput {
  /** Default: the pipeline's `to` topic. */
  topic?: string;
  /** Default: the partitioner's choice by key (murmur2, as the Java client). */
  partition?: number;
  key: string | Buffer | null;
  value: Buffer | string | null;
  headers?: Record<string, string | Buffer>;
}

/**
 * Maps one input to any number of outputs (none filters it out). Throwing a `PermanentError` (or an error matched by
 * `permanent`) sends the input to the dead-letter topic at once; any other error is tried again up to `maxAttempts`,
 * then dead-lettered. Either way the dead letter is written in the same transaction as the batch's outputs and offsets.
 */
export type Transform = (
  record: PipelineRecord,
) =>
  | PipelineOutput
  | readonly PipelineOutput[]
  | null
  | undefined
  | Promise<PipelineOutput | readonly PipelineOutput[] | null | undefined>;

/**
 * `exactly-once` (default): outputs, dead letters and the input offsets commit in one Kafka transaction.
 * `at-least-once`: outputs are produced (idempotent, acks=all), then the offsets committed; a crash between the two
 * writes the outputs again. It exists to measure what the transaction costs, and as the naive twin of the tests.
 */
export type PipelineGuarantee = 'exactly-once' | 'at-least-once';

/**
 * Named points between the steps of one batch, for crash tests (a real SIGKILL there). Production passes no injector.
 * In `at-least-once` mode `after-send-offsets` and `during-commit` are around the consumer's offset commit.
 */
export type PipelineFaultPoint =
  /** The batch's outputs were sent (in the transaction, or acknowledged in at-least-once); no offsets yet. */
  | 'pipeline:after-send'
  /** The input offsets were added to the transaction (at-least-once: committed); the transaction is not committed. */
  | 'pipeline:after-send-offsets'
  /** The transaction's commit was requested and is not yet acknowledged. */
  | 'pipeline:during-commit';

export type PipelineFaultInjector = (point: PipelineFaultPoint) => void | Promise<void>;

/** What happened to one transaction that did not commit, for logs and tests. */
export interface PipelineFailure {
  /** `aborted`: the transaction was aborted and the input rewound; `recreated`: the producer was replaced too. */
  action: 'aborted' | 'recreated';
  /** librdkafka's error code (negative: local), e.g. -144 `ERR__FENCED`, 22 `ERR_ILLEGAL_GENERATION`. */
  code: number;
  /** The error code's name, e.g. `ERR__FENCED`. */
  codeName: string;
  message: string;
  /** The step that failed. */
  step: 'begin' | 'send' | 'send-offsets' | 'commit';
}

export interface PipelineOptions {
  /** Input topic(s). */
  from: string | readonly string[];
  /** Default output topic. */
  to: string;
  transform: Transform;
  /**
   * Stable and unique per instance (e.g. `orders-enricher-0` for replica 0): a restarted instance with the same id
   * fences its previous incarnation. Also used as the consumer's `group.instance.id` (static membership).
   */
  transactionalId: string;
  /** The consumer group all instances of this pipeline share. */
  group: string;
  guarantee?: PipelineGuarantee;
  /** Where poison inputs go. Default `<input topic>-dlt` (the topic must exist). */
  deadLetterTopic?: string | ((record: PipelineRecord) => string);
  /** Tries of a transform that keeps failing with a retryable error before the input is dead-lettered. Default 3. */
  maxAttempts?: number;
  /** Errors (classes or `code`s) that dead-letter at once, besides `PermanentError`. */
  permanent?: PermanentErrors;
  /**
   * Most records per transaction (one partition's batch). Default 5000: a transaction's round trips are paid once per
   * batch, so a backlog copied in batches of 1000 ran at 0.8x its at-least-once speed, in batches of 5000 at 0.96-1.0x.
   */
  maxBatchSize?: number;
  /** Consumer session timeout; a stalled instance loses its partitions after it. Default 10000 (broker minimum 6000). */
  sessionTimeoutMs?: number;
  /**
   * The broker aborts a transaction left open longer than this (and fences its producer). It also bounds how long a
   * partition of an instance that died mid-transaction stays blocked for the instance taking it over. The transaction
   * spans only the send, the offsets and the commit (the transform runs before it). Default 10000 (as Kafka Streams).
   */
  transactionTimeoutMs?: number;
  /**
   * Exactly-once only. 0 (default): one transaction per partition batch. N > 0: one transaction over the batches of up
   * to 16 partitions polled together (each batch waits in it until it commits); it commits once every batch that joined
   * has sent and no other came, or N ms after it began at the latest. A transaction's fixed cost (~7-15 ms here) is
   * paid once per fetch instead of once per partition batch: measured, a read_committed reader sees outputs sooner and
   * small batches go faster, but a backlog of full batches was copied slower. A failure rewinds every partition of the
   * transaction (docs/transactions.md).
   */
  commitIntervalMs?: number;
  /** Read inputs from the start when the group has no committed offset. Default true. */
  fromBeginning?: boolean;
  /** Brokers, client id, extra librdkafka properties, client log routing (as for `kafkaTransport`). */
  kafka?: KafkaTransportOptions;
  logger?: Logger;
  /** Called for each transaction that did not commit (after the abort or the producer's replacement). */
  onFailure?: (failure: PipelineFailure) => void;
  /** Crash-test hook: called at each named point. */
  faults?: PipelineFaultInjector;
}

export interface PipelineStats {
  /** Inputs whose outputs (or dead letter) and offsets committed. */
  committedInputs: number;
  outputs: number;
  deadLettered: number;
  transactions: number;
  aborted: number;
  producersRecreated: number;
}

export interface Pipeline extends AsyncDisposable {
  /** Connects, joins the group and starts the loop; resolves once it runs. Idempotent. */
  start(): Promise<void>;
  /**
   * Finishes the batch in flight (commit or abort) and disconnects. Idempotent. It does not leave the group: the
   * consumer is a static member (`group.instance.id` is the transactional id), and Kafka keeps a static member's
   * partitions for it until its session expires (`sessionTimeoutMs`). A restart with the same `transactionalId` takes
   * them back at once; a pipeline stopped for good hands them to the others only after that timeout.
   */
  close(): Promise<void>;
  stats(): PipelineStats;
}
