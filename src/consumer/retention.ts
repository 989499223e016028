import { librarySchema } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { loadSql } from '../db/sql.ts';

export interface PurgeOptions {
  schema?: string;
  /** Keep dedup rows this long: the topic's retention plus a margin (a replay older than this is not deduplicated). */
  olderThanMs: number;
  /** Rows deleted per statement (default 5000). */
  chunk?: number;
}

/** Deletes dedup rows older than the window, chunk by chunk; returns how many went. */
export async function purgeProcessed(db: Db, options: PurgeOptions): Promise<number> {
  const statement = loadSql(import.meta.url, 'purge.sql', librarySchema(options.schema));
  const chunk = options.chunk ?? 5000;
  let total = 0;
  for (;;) {
    const result = await db.query(statement, [options.olderThanMs, chunk]);
    const deleted = result.rowCount ?? 0;
    total += deleted;
    if (deleted < chunk) return total;
  }
}
