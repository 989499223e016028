// The library's short watchdog (`libraryQueryTimeoutMs`) is for statements whose answers come in milliseconds. A
// migration is not one: its DDL on a grown table, and a second starter's wait for the migration lock while the first
// runs it, may take longer. Cut by the short watchdog, a service failed to start with EFF_DB_NO_ANSWER while the other
// starter's migration ran on; now both go with the pool's watchdog (`queryTimeoutMs`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import { randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const HELD_MS = 1500;

/** Holds the migration lock of `schema` in another session for `HELD_MS` (as a starter running a long migration). */
async function holdMigrationLock(schema: string): Promise<{ released: Promise<void> }> {
  const holder = pgDb({ max: 1 });
  let locked: () => void = () => undefined;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const released = holder
    .transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`effectively:migrate:${schema}`]);
      locked();
      await tx.query('SELECT pg_sleep($1)', [HELD_MS / 1000]);
    })
    .finally(() => holder.close());
  await isLocked;
  return { released };
}

test('a starter waits out another starter holding the migration lock longer than libraryQueryTimeoutMs', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ libraryQueryTimeoutMs: 300 });
  const schema = randomName('t');
  t.after(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.close();
  });
  const { released } = await holdMigrationLock(schema);
  const started = performance.now();
  const result = await migrate(db, { schema });
  await released;
  assert.ok(performance.now() - started >= HELD_MS - 100, 'it waited for the lock');
  assert.ok(result.applied.length > 0, 'and then applied the migrations');
});

test('twin: the same lock wait through the library statements of a transaction is cut by libraryQueryTimeoutMs', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ libraryQueryTimeoutMs: 300 });
  t.after(() => db.close());
  const schema = randomName('t');
  const { released } = await holdMigrationLock(schema);
  const error = await db
    .transaction((tx) => tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`effectively:migrate:${schema}`]))
    .then(
      () => undefined,
      (thrown: { code?: string }) => thrown,
    );
  await released;
  assert.equal(error?.code, 'EFF_DB_NO_ANSWER');
});
