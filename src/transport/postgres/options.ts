import type { Db } from '../../db/port.ts';
import type { Logger } from '../../observability/logger.ts';

export interface PostgresTransportOptions {
  /** The database holding the log (PGlite for the embedded mode, or a server). */
  db: Db;
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`); migrate it first. */
  schema?: string;
  /** Partitions of a topic created on first send (default 6). */
  defaultPartitions?: number;
  /** How often an idle consumer looks for new records (default 50 ms). */
  pollIntervalMs?: number;
  /**
   * How often a member heart-beats (default 500 ms): on a timer of its own, never behind a batch. On a server it takes
   * another connection of the pool while a batch holds one (give the pool at least two); on PGlite (one session) it
   * waits for the batch's transaction, whose offset commit extends the lease itself.
   */
  heartbeatMs?: number;
  /**
   * A member silent this long is gone: its partitions move to the others (default 5000 ms). A batch may run longer: its
   * offset commit checks and extends the lease in one statement, and is refused (`EFF_LEASE_LOST`) only when another
   * member really took the partition.
   */
  leaseMs?: number;
  /** Where a lost lease is reported (default: warnings and errors as JSON lines on stderr). */
  logger?: Logger;
}

export interface ResolvedPostgresOptions {
  db: Db;
  schema: string;
  defaultPartitions: number;
  pollIntervalMs: number;
  heartbeatMs: number;
  leaseMs: number;
  logger: Logger;
}
