import { invalidOptions } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';

/** Connection settings of the pure-JavaScript Kafka transport (`platformaticTransport`). */
export interface PlatformaticTransportOptions {
  /** Bootstrap brokers; default `KAFKA_BROKERS` or `127.0.0.1:9092`. */
  brokers?: string[];
  clientId?: string;
  /** Replicas of each topic `admin().createTopics` makes. Default -1: the broker's `default.replication.factor`. */
  replicationFactor?: number;
  /** Least time between two offset commits of one consumer, in ms (as `kafkaTransport`'s). Default 100. */
  commitIntervalMs?: number;
  /** Where the transport's own warnings go (a fetch that failed, a group the client could not rejoin). */
  logger?: Logger;
}

/** Throws `EFF_INVALID_OPTIONS` naming the field. */
export function validatePlatformaticOptions(options: PlatformaticTransportOptions): void {
  const { replicationFactor, commitIntervalMs, brokers } = options;
  if (brokers !== undefined && (!Array.isArray(brokers) || brokers.some((b) => typeof b !== 'string' || !b))) {
    throw invalidOptions('brokers', 'a list of host:port strings');
  }
  if (
    replicationFactor !== undefined &&
    !(replicationFactor === -1 || (Number.isInteger(replicationFactor) && replicationFactor > 0))
  ) {
    throw invalidOptions('replicationFactor', `a positive integer or -1, got ${replicationFactor}`);
  }
  if (commitIntervalMs !== undefined && !(Number.isFinite(commitIntervalMs) && commitIntervalMs >= 0)) {
    throw invalidOptions('commitIntervalMs', `a number of ms >= 0, got ${commitIntervalMs}`);
  }
}
