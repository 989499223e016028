// The embedded story (PGlite + the log in PostgreSQL, one process) through in-process crashes at the seeds' hops:
// effectively loses and repeats nothing; the naive pipeline, through the same crashes, does both.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Pipeline, runPipeline } from '../../scenarios/demo/pipeline.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

const crashes = [
  'writer:after-save',
  'consumer:after-db-commit',
  'relay:after-publish',
  'writer:after-save',
  'consumer:after-db-commit',
  'relay:after-publish',
];
let db: Db;
before(async () => {
  db = await pgliteDb();
});
after(() => db.close());

const run = (pipeline: Pipeline) => {
  const schema = `demo_test_${pipeline}`;
  return runPipeline({
    pipeline,
    db,
    transport: postgresTransport({ db, schema, pollIntervalMs: 10, heartbeatMs: 200, leaseMs: 2000 }),
    schema,
    orders: 400,
    crashes,
  });
};

test('effectively on the embedded transport: every order one e-mail through six crashes', async () => {
  const result = await run('effectively');
  assert.deepEqual(result.crashes, crashes, 'every crash happened');
  assert.deepEqual([result.orders, result.emails, result.duplicates, result.missing], [400, 400, 0, 0]);
});

test('naive twin through the same crashes: Ana gets duplicates and Bruno gets nothing', async () => {
  const result = await run('naive');
  assert.ok(result.duplicates > 0, `duplicates: ${result.duplicates}`);
  assert.ok(result.missing > 0, `missing: ${result.missing}`);
});
