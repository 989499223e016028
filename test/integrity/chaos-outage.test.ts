// What the chaos kit takes for an outage (scenarios/chaos/retry.ts): a pg client whose server session was cut between
// two statements of a transaction (a PostgreSQL restart does exactly that) answers its next query with "Client has
// encountered a connection error and is not queryable" — an error with no code. The kit's writer crashed on it at a
// PostgreSQL restart; the kit now waits it out. Naive twin: a check by SQLSTATE alone (the error carries none) misses
// it. (The library's isConnectionLost missed it too when this was written: see src/db/sqlstate.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { isOutage } from '../../scenarios/chaos/retry.ts';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { isTransientDbError, sqlState } from '../../src/db/sqlstate.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('a session cut mid-transaction: the next query is "not queryable", and the kit takes it for an outage', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const client = new pg.Client({ connectionString: defaultDatabaseUrl() });
  const killer = new pg.Client({ connectionString: defaultDatabaseUrl() });
  const errors: Error[] = [];
  client.on('error', (error) => errors.push(error));
  await Promise.all([client.connect(), killer.connect()]);
  t.after(async () => {
    await client.end().catch(() => undefined);
    await killer.end();
  });
  await client.query('BEGIN');
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await killer.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
  // The cut reaches the idle client as an 'error' event (57P01), between two statements.
  await eventually(async () => errors.length > 0, 10_000, 'the client to see its session cut');
  const failure = await client.query('SELECT 1').then(
    () => undefined,
    (error: Error) => error,
  );
  assert.ok(failure, 'the next query fails');
  assert.match(failure.message, /not queryable/);
  assert.equal(isOutage(failure), true);
  // The twin: judged by its SQLSTATE, it is no outage at all.
  assert.equal(sqlState(failure), undefined);
  assert.equal(isTransientDbError(failure), false);
});
