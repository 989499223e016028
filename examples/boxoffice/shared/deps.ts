import type { Db, FaultInjector, Logger, Transport } from 'effectively';

/** What every boxoffice service is started with: its database, its transport and the schema its tables live in. */
export interface BoxofficeDeps {
  db: Db;
  transport: Transport;
  /** The schema of the library's tables and of the service's own tables. */
  schema: string;
  logger?: Logger;
  /** Testing only: crash points handed to the library's consumers and relays. */
  faults?: FaultInjector;
  /** Prefixed to consumer group names (`<prefix>boxoffice-<service>`), so tests do not share groups. */
  groupPrefix?: string;
}

/** A started service. */
export interface RunningService {
  name: string;
  close(): Promise<void>;
}

/** The consumer group of a service: `boxoffice-<service>`, prefixed by `groupPrefix` when given. */
export function groupName(deps: BoxofficeDeps, service: string): string {
  return `${deps.groupPrefix ?? ''}boxoffice-${service}`;
}

/** How long consumers keep their dedup rows: longer than the topics' retention (7 days) plus a day for redrives. */
export const dedupRetention = { keepMs: 8 * 24 * 3600 * 1000 };
