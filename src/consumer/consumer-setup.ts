import { librarySchema } from '../db/identifiers.ts';
import { storableText } from '../db/storable.ts';
import { topicNameProblem } from '../envelope/topic-name.ts';
import { invalidOptions } from '../errors.ts';
import { type Logger, stderrLogger } from '../observability/logger.ts';
import type { Consumer, Producer, TopicPartition } from '../transport/port.ts';
import { type ResolvedConcurrency, resolveConcurrency } from './lanes.ts';
import type { ConsumerOptions } from './options.ts';
import { RetryTopics } from './retry-topics.ts';

/** A consumer's options checked, with their defaults filled in. */
export interface ConsumerSetup {
  schema: string;
  maxBatchSize: number;
  backoff: { baseMs: number; capMs: number };
  maxAttempts: number;
  logger: Logger;
  retryTopics: RetryTopics | undefined;
  concurrency: ResolvedConcurrency;
}

/** What a consumer's parts share and change while it runs (its transport's consumer exists from `start()` on). */
export interface ConsumerState {
  transportConsumer: Consumer | undefined;
  /** Paused by the application, and the partitions whose batches it held meanwhile. */
  held: boolean;
  heldPartitions: Map<string, TopicPartition>;
  /** Made at the first forward to a retry topic. */
  producer: Producer | undefined;
  /** The log is in the consumer's own database: offsets commit inside the batch's transaction. */
  offsetsInTransaction: boolean;
  /** Gives this consumer's share of the pool back (pool-fit.ts): at close. */
  releasePool?: () => void;
}

/** Checks a consumer's options (`EFF_INVALID_OPTIONS` naming the field) and fills in the defaults. */
export function setUpConsumer(options: ConsumerOptions): ConsumerSetup {
  const schema = librarySchema(options.schema);
  const maxBatchSize = options.maxBatchSize ?? 500;
  if (!options.group) throw invalidOptions('group', 'a non-empty string');
  if (!Array.isArray(options.topics) || options.topics.length === 0)
    throw invalidOptions('topics', 'at least one topic');
  if ((typeof options.handler === 'function') === (typeof options.batchHandler === 'function')) {
    throw invalidOptions('handler', 'exactly one of `handler` and `batchHandler` must be a function');
  }
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) throw invalidOptions('maxBatchSize', 'a positive integer');
  const backoff = { baseMs: options.retry?.baseMs ?? 500, capMs: options.retry?.capMs ?? 30_000 };
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw invalidOptions('maxAttempts', 'a positive integer');
  const retryTopics = options.retryTopics ? new RetryTopics(options.topics, options.retryTopics) : undefined;
  // Kafka's rule on every transport, for the topics and the retry chain's names derived from them
  for (const topic of retryTopics?.subscriptions() ?? options.topics) {
    const problem = topicNameProblem(topic);
    if (problem !== undefined) throw invalidOptions('topics', `\`${storableText(topic).slice(0, 300)}\` ${problem}`);
  }
  const logger = options.logger ?? stderrLogger;
  const concurrency = resolveConcurrency(options.concurrency);
  return { schema, maxBatchSize, backoff, maxAttempts, logger, retryTopics, concurrency };
}
