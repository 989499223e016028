import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';

export function chaosDb(): Db {
  return pgDb({ max: 2 });
}
