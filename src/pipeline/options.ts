import type { PermanentErrors } from '../consumer/classify.ts';
import { deadLetterTopicName } from '../consumer/retry-topics.ts';
import { invalidOptions } from '../errors.ts';
import { type Logger, stderrLogger } from '../observability/logger.ts';
import { defaultBrokers, type KafkaTransportOptions, validateKafkaOptions } from '../transport/kafka/config.ts';
import type {
  PipelineFailure,
  PipelineFaultInjector,
  PipelineGuarantee,
  PipelineOptions,
  PipelineRecord,
  Transform,
} from './types.ts';

export interface PipelineSettings {
  from: string[];
  to: string;
  transform: Transform;
  transactionalId: string;
  group: string;
  guarantee: PipelineGuarantee;
  deadLetterTopic: (record: PipelineRecord) => string;
  maxAttempts: number;
  permanent: PermanentErrors;
  maxBatchSize: number;
  sessionTimeoutMs: number;
  transactionTimeoutMs: number;
  commitIntervalMs: number;
  fromBeginning: boolean;
  brokers: string[];
  kafka: KafkaTransportOptions;
  logger: Logger;
  onFailure: (failure: PipelineFailure) => void;
  faults: PipelineFaultInjector | undefined;
}

export const pipelineDefaults = {
  guarantee: 'exactly-once',
  maxAttempts: 3,
  /**
   * A transaction's fixed cost (its round trips, ~4 ms here) over up to 5000 inputs: ~100 ms of copying at ~45,000
   * inputs/s, the size of Kafka Streams' 100 ms exactly-once commit (docs/transactions.md).
   */
  maxBatchSize: 5000,
  sessionTimeoutMs: 10_000,
  transactionTimeoutMs: 10_000,
  /** A transaction per partition batch: windows (N > 0) read sooner but copied a backlog slower (docs/transactions.md). */
  commitIntervalMs: 0,
  fromBeginning: true,
} as const;

function name(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.includes('\u0000')) {
    throw invalidOptions(field, 'must be a non-empty string without NUL');
  }
  return value;
}

function positiveInteger(field: string, value: number | undefined, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  if (!(Number.isInteger(value) && value >= minimum))
    throw invalidOptions(field, `must be an integer >= ${minimum}, got ${value}`);
  return value;
}

/** Validates at construction (EFF_INVALID_OPTIONS naming the field) and fills the defaults. */
export function resolveOptions(options: PipelineOptions): PipelineSettings {
  const from = (typeof options.from === 'string' ? [options.from] : [...(options.from ?? [])]).map((topic, index) =>
    name(`from[${index}]`, topic),
  );
  if (from.length === 0) throw invalidOptions('from', 'must name at least one topic');
  if (typeof options.transform !== 'function') throw invalidOptions('transform', 'must be a function');
  const guarantee = options.guarantee ?? pipelineDefaults.guarantee;
  if (guarantee !== 'exactly-once' && guarantee !== 'at-least-once') {
    throw invalidOptions('guarantee', `must be 'exactly-once' or 'at-least-once', got ${String(guarantee)}`);
  }
  const dlt = options.deadLetterTopic;
  if (dlt !== undefined && typeof dlt !== 'function') name('deadLetterTopic', dlt);
  const kafka = options.kafka ?? {};
  validateKafkaOptions(kafka);
  const logger = options.logger ?? kafka.logger ?? stderrLogger;
  return {
    from,
    to: name('to', options.to),
    transform: options.transform,
    transactionalId: name('transactionalId', options.transactionalId),
    group: name('group', options.group),
    guarantee,
    deadLetterTopic:
      typeof dlt === 'function' ? dlt : dlt === undefined ? (record) => deadLetterTopicName(record.topic) : () => dlt,
    maxAttempts: positiveInteger('maxAttempts', options.maxAttempts, pipelineDefaults.maxAttempts),
    permanent: options.permanent ?? [],
    maxBatchSize: positiveInteger('maxBatchSize', options.maxBatchSize, pipelineDefaults.maxBatchSize),
    sessionTimeoutMs: positiveInteger(
      'sessionTimeoutMs',
      options.sessionTimeoutMs,
      pipelineDefaults.sessionTimeoutMs,
      1000,
    ),
    transactionTimeoutMs: positiveInteger(
      'transactionTimeoutMs',
      options.transactionTimeoutMs,
      pipelineDefaults.transactionTimeoutMs,
      1000,
    ),
    commitIntervalMs: positiveInteger(
      'commitIntervalMs',
      options.commitIntervalMs,
      pipelineDefaults.commitIntervalMs,
      0,
    ),
    fromBeginning: options.fromBeginning ?? pipelineDefaults.fromBeginning,
    brokers: kafka.brokers ?? defaultBrokers(),
    kafka,
    logger,
    onFailure: options.onFailure ?? (() => undefined),
    faults: options.faults,
  };
}
