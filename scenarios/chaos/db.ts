import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';

export function chaosDb(): Db {
  // The concurrent consumer holds a transaction per lane and per partition in flight (more wait for a connection).
  // A silent connection (--net-faults) is noticed within seconds: the kit's statements are all short.
  return pgDb({
    max: Number(process.env.CHAOS_CONCURRENT ?? 0) > 0 ? 12 : 2,
    statementTimeoutMs: 10_000,
    idleInTransactionTimeoutMs: 10_000,
    queryTimeoutMs: 12_000,
    connectionTimeoutMs: 5_000,
  });
}
