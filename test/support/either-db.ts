import { after, type TestContext } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { freshSchema, randomName } from './fixtures.ts';

/**
 * Call at the top of a test file: a function giving a test a migrated schema of its own, on PGlite or on the
 * PostgreSQL server. PGlite takes seconds to start, so one instance serves every test of the file (closed after them
 * all); the server's schema is dropped after its test.
 */
export function eitherDb(): (t: TestContext, where: 'pglite' | 'server') => Promise<{ db: Db; schema: string }> {
  let embedded: Promise<Db> | undefined;
  after(async () => (await embedded)?.close());
  return async (t, where) => {
    if (where === 'server') return freshSchema(t);
    embedded ??= pgliteDb();
    const db = await embedded;
    const schema = randomName('t');
    await migrate(db, { schema });
    return { db, schema };
  };
}
