import type { Db } from '../db/port.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { ResolvedConcurrency } from './lanes.ts';

/** The transactions a consumer may hold at once: a lane each in `'key'` mode, one per partition in flight. */
export function transactionsAtOnce(concurrency: ResolvedConcurrency): number {
  return (concurrency.mode === 'key' ? concurrency.max : 1) * concurrency.partitions;
}

/**
 * Fits the database pool to the concurrency asked for, at start: each transaction in flight holds a connection, and
 * one more is kept for a query outside them (a handler's own, the dead-letter lookup, the started records). A pool the
 * library sized (`pgDb()` without `max`) grows to that; a pool the user sized too small is refused with both numbers
 * (before, a warning in the log, and 16 lanes on a pool of 4 ran 4 at a time). A single session (PGlite, `max: 1`)
 * is left alone: the lanes take turns on it and a nested query is refused (`EFF_NESTED_TRANSACTION`).
 */
export function fitPool(db: Db, concurrency: ResolvedConcurrency, group: string, logger: Logger): void {
  const pool = db.connections;
  if (pool === undefined || pool <= 1) return;
  const atOnce = transactionsAtOnce(concurrency);
  const needed = atOnce + 1;
  if (pool >= needed) return;
  if (db.growTo) {
    db.growTo(needed);
    logger.info("database pool grown to fit the consumer's concurrency", { group, from: pool, to: needed });
    return;
  }
  throw new EffectivelyError(
    ErrorCodes.EFF_POOL_TOO_SMALL,
    `the database pool has ${pool} connections and consumer group ${group} may run ${atOnce} transactions at once ` +
      `(concurrency.max × concurrency.partitions), plus one connection for queries outside them: ${needed} needed. ` +
      `Give the pool at least ${needed} connections (pgDb({ max: ${needed} }), or leave max out and the consumer ` +
      `sizes it), or lower concurrency.max/concurrency.partitions to at most ${pool - 1} transactions at once`,
    { details: { group, pool, transactionsAtOnce: atOnce, needed } },
  );
}
