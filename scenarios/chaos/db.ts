import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';

export function chaosDb(): Db {
  // The concurrent consumer holds a transaction per lane and per partition in flight: with no `max` the library
  // sizes the pool from the concurrency asked for (a pool given too small is refused at start, EFF_POOL_TOO_SMALL).
  // A silent connection (--net-faults) is noticed within seconds: the kit's statements are all short.
  return pgDb({
    ...(Number(process.env.CHAOS_CONCURRENT ?? 0) > 0 ? {} : { max: 2 }),
    statementTimeoutMs: 10_000,
    idleInTransactionTimeoutMs: 10_000,
    queryTimeoutMs: 12_000,
    connectionTimeoutMs: 5_000,
  });
}
