import type { Db } from '../../db/port.ts';

export interface PostgresTransportOptions {
  /** The database holding the log (PGlite for the embedded mode, or a server). */
  db: Db;
  /** Schema of the library's tables (default `effectively`); migrate it first. */
  schema?: string;
  /** Partitions of a topic created on first send (default 6). */
  defaultPartitions?: number;
  /** How often an idle consumer looks for new records (default 50 ms). */
  pollIntervalMs?: number;
  /** How often a member heart-beats and rebalances (default 500 ms). */
  heartbeatMs?: number;
  /** A member silent this long is gone: its partitions move to the others (default 5000 ms). */
  leaseMs?: number;
}

export interface ResolvedPostgresOptions {
  db: Db;
  schema: string;
  defaultPartitions: number;
  pollIntervalMs: number;
  heartbeatMs: number;
  leaseMs: number;
}
