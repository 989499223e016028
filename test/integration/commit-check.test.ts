// Every commit the library issues goes through Db.transaction: a COMMIT that PostgreSQL answered with ROLLBACK (a
// failed statement caught without a savepoint) must reject with EFF_TX_ABORTED, on the server and on PGlite. The
// naive twin shows the fault is real: the raw driver resolves that COMMIT as if it had committed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function swallowingWork(db: Db, table: string) {
  await db.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`);
  await db.query(`INSERT INTO ${table} VALUES (1)`);
  return db.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${table} VALUES (2)`);
    await tx.query(`INSERT INTO ${table} VALUES (1)`).catch(() => undefined); // 23505, swallowed
    return 'done';
  });
}

for (const [name, open] of [
  ['server', async () => pgDb({ max: 1 })],
  ['PGlite', () => pgliteDb()],
] as const) {
  test(`Db.transaction (${name}): a COMMIT answered with ROLLBACK rejects with EFF_TX_ABORTED`, async (t) => {
    if (name === 'server' && !(await needs(t, 'postgres'))) return;
    const db: Db = await open();
    const table = `public.${randomName('commit')}`;
    t.after(async () => {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
      await db.close();
    });
    await assert.rejects(swallowingWork(db, table), (error) => {
      assert.ok(error instanceof EffectivelyError);
      assert.equal(error.code, 'EFF_TX_ABORTED');
      assert.match(error.message, /savepoint/);
      return true;
    });
    const { rows } = await db.query<{ n: number }>(`SELECT n FROM ${table} ORDER BY n`);
    assert.deepEqual(
      rows.map((row) => row.n),
      [1],
      'nothing of the aborted transaction committed',
    );
  });
}

test('naive twin: the raw driver resolves a COMMIT that did not commit', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const client = new pg.Client({ connectionString: defaultDatabaseUrl() });
  await client.connect();
  t.after(() => client.end());
  await client.query('BEGIN');
  await client.query('SELECT 1/0').catch(() => undefined);
  const result = await client.query('COMMIT');
  assert.equal(result.command, 'ROLLBACK', 'no error: only the tag tells');
});
