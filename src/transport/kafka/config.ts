import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { KafkaClientLogLevel } from './log.ts';
import { type KafkaSecurity, validateKafkaSecurity } from './security.ts';

/** Connection settings for the Kafka transport. `KAFKA_BROKERS` (comma-separated) overrides the default. */
export interface KafkaTransportOptions extends KafkaSecurity {
  /** Bootstrap brokers; default `KAFKA_BROKERS` or `127.0.0.1:9092` (not `localhost`: Node resolves it to ::1). */
  brokers?: string[];
  clientId?: string;
  /**
   * Extra librdkafka properties for the producers and consumers. For TLS and SASL use `ssl` and `sasl` (docs/security.md):
   * they reach the admin too.
   */
  rdkafka?: Record<string, string | number | boolean>;
  /**
   * Replicas of each topic the library creates (retry and dead-letter topics, `admin().createTopics`). Default -1:
   * the broker's `default.replication.factor` (on a three-node cluster usually 3). Set it when the cluster default
   * is not what these topics should have; it may not exceed the number of brokers.
   */
  replicationFactor?: number;
  /**
   * Receives the Kafka client's own log lines (librdkafka's and the client binding's), structured with
   * `source: 'kafka-client'`, `client` and `facility` fields. Default: `stderrLogger` (warnings and errors as JSON).
   */
  logger?: Logger;
  /** The lowest level of the client's own lines that is logged. Default `'warn'`. */
  clientLogLevel?: KafkaClientLogLevel;
  /**
   * At most one line per distinct client message per this many ms (an outage repeats the same failure); the next
   * line after the interval carries `suppressed`: how many were dropped. Default 30000; 0 logs every line.
   */
  clientLogIntervalMs?: number;
  /**
   * Least time between two offset commits of one consumer, in ms. A consumer notes each position after its database
   * commit and returns at once; the noted positions (the latest per partition) go to the broker in one request at a
   * time, at most one per interval, and revoke and close send the last ones before the partitions go. A crash loses at
   * most the positions of this interval: those records are redelivered and dedup absorbs them. Default 100; 0 sends
   * as soon as the request before has been answered.
   */
  commitIntervalMs?: number;
  /**
   * How long a consumer's `close()` waits for the client to leave the group, in ms. The client's close waits for its
   * last offset commit until the group coordinator answers; past this bound `close()` logs `EFF_CLOSE_TIMEOUT` naming
   * the positions never confirmed (redelivered, deduplicated) and returns. Default 10000.
   */
  closeTimeoutMs?: number;
}

export function defaultBrokers(): string[] {
  const fromEnv = process.env.KAFKA_BROKERS;
  if (fromEnv)
    return fromEnv
      .split(',')
      .map((broker) => broker.trim())
      .filter(Boolean);
  return ['127.0.0.1:9092'];
}

function invalid(field: string, message: string): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_INVALID_OPTIONS, `kafkaTransport: ${field} ${message}`, {
    details: { field },
  });
}

/** Throws `EFF_INVALID_OPTIONS` naming the field. */
export function validateKafkaOptions(options: KafkaTransportOptions): void {
  validateKafkaSecurity(options);
  const { replicationFactor, clientLogIntervalMs, clientLogLevel, commitIntervalMs, closeTimeoutMs } = options;
  if (
    replicationFactor !== undefined &&
    !(replicationFactor === -1 || (Number.isInteger(replicationFactor) && replicationFactor > 0))
  ) {
    throw invalid(
      'replicationFactor',
      `must be a positive integer or -1 (the broker's default), got ${replicationFactor}`,
    );
  }
  if (clientLogIntervalMs !== undefined && !(Number.isFinite(clientLogIntervalMs) && clientLogIntervalMs >= 0)) {
    throw invalid('clientLogIntervalMs', `must be a number of ms >= 0, got ${clientLogIntervalMs}`);
  }
  if (commitIntervalMs !== undefined && !(Number.isFinite(commitIntervalMs) && commitIntervalMs >= 0)) {
    throw invalid('commitIntervalMs', `must be a number of ms >= 0, got ${commitIntervalMs}`);
  }
  if (
    closeTimeoutMs !== undefined &&
    !(Number.isInteger(closeTimeoutMs) && closeTimeoutMs > 0 && closeTimeoutMs < 2 ** 31)
  ) {
    throw invalid('closeTimeoutMs', `must be a whole number of ms > 0 (below 2^31), got ${closeTimeoutMs}`);
  }
  if (clientLogLevel !== undefined && !['error', 'warn', 'info', 'debug'].includes(clientLogLevel)) {
    throw invalid('clientLogLevel', `must be one of error, warn, info, debug; got ${String(clientLogLevel)}`);
  }
}
