import assert from 'node:assert/strict';
import { test } from 'node:test';
import { purgeProcessed } from '../../src/consumer/retention.ts';
import { uuidv7 } from '../../src/envelope/uuidv7.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('dedup rows older than the window are purged in chunks; younger ones stay', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const old = Array.from({ length: 25 }, () => uuidv7());
  const young = Array.from({ length: 7 }, () => uuidv7());
  await db.query(
    `INSERT INTO ${schema}.processed_events (consumer, event_id, processed_at)
     SELECT 'g', unnest($1::uuid[]), now() - interval '8 days'`,
    [old],
  );
  await db.query(`INSERT INTO ${schema}.processed_events (consumer, event_id) SELECT 'g', unnest($1::uuid[])`, [young]);
  const purged = await purgeProcessed(db, { schema, olderThanMs: 7 * 24 * 3600 * 1000, chunk: 10 });
  assert.equal(purged, 25);
  const { rows } = await db.query<{ event_id: string }>(`SELECT event_id::text FROM ${schema}.processed_events`);
  assert.deepEqual(rows.map((row) => row.event_id).sort(), [...young].sort());
});
