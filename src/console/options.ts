// The console's options, checked and defaulted in one place.
import type { BackpressureMetrics } from '../backpressure/metrics.ts';
import { isEmbeddedDb } from '../cli/redrive-target.ts';
import { librarySchema } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { invalidOptions } from '../errors.ts';
import { type Logger, stderrLogger } from '../observability/logger.ts';
import type { RelayStats } from '../outbox/relay-stats.ts';
import { type ConsoleAuthenticate, type ConsoleTokens, consoleTokens } from './auth.ts';

export interface ConsoleOptions {
  db: Db;
  /** The library's schema (default: `EFFECTIVELY_SCHEMA`, else `effectively`). */
  schema?: string;
  /** Where to listen (default 127.0.0.1: this machine only). */
  host?: string;
  /** The port (default 0: one the system picks; `url` says which). */
  port?: number;
  /**
   * The path the console lives under when you mount `handle` in your own server beside other routes (`/ops`: the
   * page at `/ops/`, its API at `/ops/api/...`). Default none: the console owns every path.
   */
  basePath?: string;
  /**
   * What the consumers read, for lag and for redrive: `postgres` (the log in this database; the default for an
   * embedded Db) or `kafka` (`KAFKA_BROKERS`). On a server without it, health reads Kafka and a redrive must say.
   */
  transport?: 'kafka' | 'postgres';
  /** Topics whose lag is read on Kafka (default: those each group committed offsets on). */
  topics?: readonly string[];
  /** Tokens of the two roles (default: random ones, printed as links by the CLI; `links` has them). */
  tokens?: Partial<ConsoleTokens>;
  /** Your own authentication instead of tokens: the user and role of a request, or undefined to refuse it (401). */
  authenticate?: ConsoleAuthenticate;
  /** No action at all, whatever the role (default false). */
  readOnly?: boolean;
  /** Relays of this process, for their heartbeat on the health view. */
  relays?: readonly { stats(): RelayStats }[];
  /** The sender's breaker and limiter state, for the health view. */
  backpressure?: BackpressureMetrics;
  /**
   * Who may scrape `/metrics` (the Prometheus text of `prometheusMetrics`): `reader` (default; a scraper sends
   * `Authorization: Bearer <reader token>`), `public` (no login: only where the port is not reachable from outside), or
   * `false` (no `/metrics` route).
   */
  metrics?: 'reader' | 'public' | false;
  /** An outbox row older than this is an alert (default 300000 ms). */
  stuckAfterMs?: number;
  /** A group's lag above this many records is an alert (default 10000). */
  maxLag?: number;
  logger?: Logger;
}

/** The options checked (`EFF_INVALID_OPTIONS` naming the field) with their defaults. */
export function consoleSettings(options: ConsoleOptions) {
  const { db } = options;
  const schema = librarySchema(options.schema);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  if (basePath !== '' && !/^(\/[\w.~-]+)+$/.test(basePath)) throw invalidOptions('basePath', 'a path like /ops');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalidOptions('port', 'an integer 0-65535');
  if (options.transport !== undefined && !['kafka', 'postgres'].includes(options.transport))
    throw invalidOptions('transport', 'kafka or postgres');
  const transport = options.transport ?? (isEmbeddedDb(db) ? 'postgres' : undefined);
  const logger = options.logger ?? stderrLogger;
  const metrics = options.metrics ?? 'reader';
  if (!['reader', 'public', false].includes(metrics)) throw invalidOptions('metrics', "'reader', 'public' or false");
  const readOnly = options.readOnly ?? false;
  for (const [role, token] of Object.entries(options.tokens ?? {}))
    if (typeof token !== 'string' || token.length < 16 || /[^\w.~-]/.test(token))
      throw invalidOptions(`tokens.${role}`, 'at least 16 characters of A-Z a-z 0-9 . _ ~ -');
  if (options.tokens?.operator !== undefined && options.tokens.operator === options.tokens.reader)
    throw invalidOptions('tokens', 'the reader token must differ from the operator token');
  const tokens = options.authenticate ? undefined : consoleTokens(options.tokens);
  return { schema, host, port, basePath, transport, readOnly, logger, tokens, metrics };
}
