// fromKysely / fromDrizzle given the database instead of one of its transactions: refused with EFF_INVALID_OPTIONS.
// Accepted, the outbox row would commit alone on a connection of the pool, whatever became of the caller's
// transaction (naive twin: the order rolled back, the row written through the Kysely itself stayed). Prisma's case is
// in prisma.test.ts (its client is generated there).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { fromDrizzle } from '../../src/orm/drizzle.ts';
import { fromKysely } from '../../src/orm/kysely.ts';
import { freshSchema, idsIn, idTable } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

class Rollback extends Error {}

test('fromKysely and fromDrizzle refuse the database itself and take its transactions', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const pool = new pg.Pool({ connectionString: defaultDatabaseUrl(), max: 2 });
  t.after(() => pool.end());
  const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  assert.throws(() => fromKysely(kysely), { code: 'EFF_INVALID_OPTIONS' });
  await kysely.transaction().execute(async (trx) => {
    assert.equal((await fromKysely(trx).query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n, 1);
  });
  const db = drizzle({ client: pool });
  assert.throws(() => fromDrizzle(db), { code: 'EFF_INVALID_OPTIONS' });
  await db.transaction(async (tx) => {
    assert.equal((await fromDrizzle(tx).query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n, 1);
  });
});

test('naive twin: a statement through the Kysely itself, inside a transaction that rolls back, stays committed', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  const pool = new pg.Pool({ connectionString: defaultDatabaseUrl(), max: 2 });
  t.after(() => pool.end());
  const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const rootAsQueryable = { query: (text: string) => kysely.executeQuery({ sql: text, parameters: [] } as never) };
  await kysely
    .transaction()
    .execute(async (trx) => {
      await trx.executeQuery({ sql: `INSERT INTO ${name} VALUES ('order')`, parameters: [] } as never);
      await rootAsQueryable.query(`INSERT INTO ${name} VALUES ('outbox row')`);
      throw new Rollback('the order fails');
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  assert.deepEqual(await idsIn(db, name), ['outbox row']);
});
