import type { Db } from '../db/port.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { ResolvedConcurrency } from './lanes.ts';

/**
 * The transactions a consumer may hold at once: a lane each in `'key'` mode, one per partition in flight, and with
 * `keyOrdered` one more for the drainer, which applies parked records on its own timer while the lanes run.
 */
export function transactionsAtOnce(concurrency: ResolvedConcurrency, keyOrdered = false): number {
  return (concurrency.mode === 'key' ? concurrency.max : 1) * concurrency.partitions + (keyOrdered ? 1 : 0);
}

/** Per Db, the transactions at once of each consumer started on it and not closed (several groups share one pool). */
const shares = new WeakMap<Db, Map<object, number>>();

/**
 * Fits the database pool to the concurrency asked for, at start: each transaction in flight holds a connection, and
 * one more is kept for a query outside them (a handler's own, the dead-letter lookup, the started records). With
 * `keyOrdered` the drainer's transaction counts too: uncounted, it took that one connection, and 4 lanes and the drainer
 * whose handlers each asked for a connection of their own waited out the pool's `connectionTimeoutMs`. The
 * consumers started on the same Db and not closed count together: two groups of 16 lanes on one pool need 33. A pool
 * the library sized (`pgDb()` without `max`) grows to that; a pool the user sized too small is refused with both
 * numbers (before, a warning in the log, and 16 lanes on a pool of 4 ran 4 at a time). A single session (PGlite,
 * `max: 1`) is left alone: the lanes take turns on it and a nested query is refused (`EFF_NESTED_TRANSACTION`).
 * Returns what gives this consumer's share back (at its close).
 */
export function fitPool(
  db: Db,
  concurrency: ResolvedConcurrency,
  group: string,
  logger: Logger,
  keyOrdered = false,
): () => void {
  const pool = db.connections;
  if (pool === undefined || pool <= 1) return () => undefined;
  const onDb = shares.get(db) ?? new Map<object, number>();
  const others = [...onDb.values()].reduce((sum, share) => sum + share, 0);
  const own = transactionsAtOnce(concurrency, keyOrdered);
  const atOnce = others + own;
  const needed = atOnce + 1;
  if (pool < needed && !db.growTo) {
    const beside = others > 0 ? ` (${own} of its own, ${others} of the other consumers started on this Db)` : '';
    throw new EffectivelyError(
      ErrorCodes.EFF_POOL_TOO_SMALL,
      `the database pool has ${pool} connections and consumer group ${group} may run ${atOnce} transactions at once${beside} ` +
        `(concurrency.max × concurrency.partitions${keyOrdered ? ', + 1 for the key-order drainer' : ''}), plus one connection for queries outside them: ${needed} needed. ` +
        `Give the pool at least ${needed} connections (pgDb({ max: ${needed} }), or leave max out and the consumer ` +
        `sizes it), or lower concurrency.max/concurrency.partitions to at most ${pool - 1 - others} transactions at once`,
      { details: { group, pool, transactionsAtOnce: atOnce, needed } },
    );
  }
  if (pool < needed && db.growTo) {
    db.growTo(needed);
    logger.info("database pool grown to fit the consumer's concurrency", { group, from: pool, to: needed });
  }
  const share = {};
  onDb.set(share, own);
  shares.set(db, onDb);
  return () => {
    onDb.delete(share);
  };
}
