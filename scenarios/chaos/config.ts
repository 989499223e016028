import { assertIdentifier } from '../../src/db/identifiers.ts';

/** What every chaos process is told through its environment. */
export interface ChaosConfig {
  schema: string;
  topic: string;
  group: string;
  events: number;
  /** Orders written per second by the writer (0 = as fast as it can). */
  rate: number;
  /**
   * `effectively`, or a naive twin: `no-dedup` (consumer writes, then commits the offset, no dedup row),
   * `offset-first` (consumer commits the offset, then writes), `no-outbox` (writer saves, then publishes).
   */
  mode: 'effectively' | 'no-dedup' | 'offset-first' | 'no-outbox';
  /**
   * The consumer runs concurrently: keys in parallel inside each partition (`mode: 'key'`, up to 8 lanes) and
   * `partitionsInFlight` partitions at once. 0: one record after the other, one partition at a time.
   */
  concurrent: number;
  /** Every Nth order's event carries a padding of 1 to 5 MB (0: none): large records among the small ones. */
  bigEvery: number;
  /** Orders share this many keys (`customer-<orderNo % keys>`), so each key carries many events in order (0: one key per order). */
  keys: number;
  /** How the relay reads the outbox: `poll` (the table) or `wal` (the write-ahead log, on the private cluster). */
  relay: 'poll' | 'wal';
  /** The Kafka transport of the relay, the consumer and the naive writer: `kafka` (default) or `kafka-js`. */
  transport: 'kafka' | 'kafka-js';
}

export function configFromEnv(): ChaosConfig {
  const env = process.env;
  return {
    schema: assertIdentifier(env.CHAOS_SCHEMA ?? '', 'schema'),
    topic: env.CHAOS_TOPIC ?? '',
    group: env.CHAOS_GROUP ?? '',
    events: Number(env.CHAOS_EVENTS ?? 0),
    rate: Number(env.CHAOS_RATE ?? 0),
    mode: (env.CHAOS_MODE ?? 'effectively') as ChaosConfig['mode'],
    concurrent: Number(env.CHAOS_CONCURRENT ?? 0),
    bigEvery: Number(env.CHAOS_BIG_EVERY ?? 0),
    keys: Number(env.CHAOS_KEYS ?? 0),
    relay: env.CHAOS_RELAY === 'wal' ? 'wal' : 'poll',
    transport: env.CHAOS_TRANSPORT === 'kafka-js' ? 'kafka-js' : 'kafka',
  };
}

export function configToEnv(config: ChaosConfig): Record<string, string> {
  return {
    CHAOS_SCHEMA: config.schema,
    CHAOS_TOPIC: config.topic,
    CHAOS_GROUP: config.group,
    CHAOS_EVENTS: String(config.events),
    CHAOS_RATE: String(config.rate),
    CHAOS_MODE: config.mode,
    CHAOS_CONCURRENT: String(config.concurrent),
    CHAOS_BIG_EVERY: String(config.bigEvery),
    CHAOS_KEYS: String(config.keys),
    CHAOS_RELAY: config.relay,
    CHAOS_TRANSPORT: config.transport,
  };
}
