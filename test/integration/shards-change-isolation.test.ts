// changeShards against a writer at REPEATABLE READ (or SERIALIZABLE): its snapshot predates the change, so a plain read
// of the stored count passed the old count and its rows went in under it (shards the relays no longer read). The
// writer reads the count FOR SHARE now: it fails with 40001 and its retry is checked against the new count. Real
// PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Queryable } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { changeShards, ensureShards } from '../../src/outbox/shards-setting.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** A REPEATABLE READ writer with 16 shards takes its snapshot, changeShards(32) commits, then the writer enqueues. */
async function staleWriter(t: import('node:test').TestContext, read: (tx: Queryable) => Queryable) {
  const { db, schema } = await freshSchema(t);
  await ensureShards(db, schema, 16);
  const outbox = createOutbox({ schema, shards: 16, notify: false });
  let outcome: unknown = 'inserted';
  await db
    .transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await tx.query(`SELECT count(*) FROM ${schema}.outbox`); // the snapshot
      await changeShards(db, { schema, shards: 32 });
      await outbox.enqueue(read(tx), createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: {} }));
    })
    .catch((error: unknown) => {
      outcome = (error as { code?: unknown }).code;
    });
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`);
  return { outcome, rows: Number(rows[0]?.n) };
}

test('a REPEATABLE READ writer whose snapshot predates changeShards fails (40001); nothing goes in under the old count', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.deepEqual(await staleWriter(t, (tx) => tx), { outcome: '40001', rows: 0 });
});

test('naive twin: the count read without FOR SHARE (the old statement) lets the row in under the old count', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const plain = (tx: Queryable): Queryable => ({
    query: (text, params) => tx.query(text.replaceAll(' FOR SHARE', ''), params),
  });
  assert.deepEqual(await staleWriter(t, plain), { outcome: 'inserted', rows: 1 });
});
