// A handler that kills its process (issue 27, item 5): attempts lived in memory only, so a record whose handler kills
// the process (out of memory, process.exit, a native crash) was tried again after every restart, for ever, and never
// dead-lettered. Now a partition whose first batch starts where an earlier one died is applied record by record, each
// start counted in the database first; a record started alone more than maxAttempts (2) times is a dead letter. The
// consumer runs in a child process that SIGKILLs itself on record 1, restarted until it ends; at most 6 runs. Real
// PostgreSQL, the postgres transport.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { sendKeyed } from '../support/embedded-log.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('a record whose handler kills the process is dead-lettered after maxAttempts deaths; the others applied once', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await db.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
  const topic = 'deadly';
  await sendKeyed(postgresTransport({ db, schema, logger: silentLogger }), topic, ['a', 'b', 'c'], '/deadly');
  const child = fileURLToPath(new URL('./started-crash.child.ts', import.meta.url));
  const runs: (string | number | null)[] = [];
  for (let run = 0; run < 6; run++) {
    const end = await new Promise<string | number | null>((resolve) => {
      const proc = execFile(process.execPath, ['--import', 'tsx', child, schema, topic, 'g'], { timeout: 30_000 });
      proc.on('exit', (code, signal) => resolve(signal ?? code));
    });
    runs.push(end);
    if (end === 0) break;
  }
  assert.equal(runs.at(-1), 0, `the consumer got past the deadly record: runs ended ${JSON.stringify(runs)}`);
  const { rows } = await db.query<{ n: number }>(`SELECT n FROM ${schema}.applied ORDER BY n`);
  assert.deepEqual(
    rows.map((row) => row.n),
    [0, 2],
    'the others applied once each',
  );
  const letters = await db.query<{ offset: string; reason: string }>(
    `SELECT "offset"::text AS "offset", reason FROM ${schema}.dead_letters`,
  );
  assert.deepEqual(
    letters.rows.map((row) => row.offset),
    ['1'],
  );
  assert.match(letters.rows[0]!.reason, /started alone 2 times without finishing/);
});
