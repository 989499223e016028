import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';

export function chaosDb(): Db {
  // The concurrent consumer holds a transaction per lane and per partition in flight (more wait for a connection).
  return pgDb({ max: Number(process.env.CHAOS_CONCURRENT ?? 0) > 0 ? 12 : 2 });
}
