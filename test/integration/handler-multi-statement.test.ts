// A transaction statement hidden among several statements of one query (`INSERT …; COMMIT`), on the real PostgreSQL.
// The simple query protocol runs them all: the COMMIT would commit the consumer's transaction halfway (the batch's
// dedup rows with it) and what follows would run outside any transaction. The handler's view of the transaction reads
// the query as PostgreSQL's lexer does and refuses it before anything runs; a library transaction its own work ended
// anyway fails instead of reporting "committed". Naive twin: the same query on the transaction itself commits halfway,
// and the COMMIT after it answers COMMIT.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { GuardedTx } from '../../src/consumer/guarded-tx.ts';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { freshSchema, idsIn, idTable } from '../support/fixtures.ts';
import { sentThenBatchFails } from '../support/handler-tx.ts';
import { needs } from '../support/services.ts';

test('a COMMIT, END or ROLLBACK among the statements of one query on ctx.tx is refused before anything runs', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  for (const text of [
    `INSERT INTO ${name} VALUES ('a'); COMMIT`,
    `INSERT INTO ${name} VALUES ('b') ; /* done */ end`,
    `INSERT INTO ${name} VALUES ('c');\n-- and\nCOMMIT;`,
    `ROLLBACK; INSERT INTO ${name} VALUES ('d')`,
    `INSERT INTO ${name} VALUES ('e'); COMMIT AND CHAIN`,
    `BEGIN; INSERT INTO ${name} VALUES ('f'); COMMIT`,
  ]) {
    const refused = await sentThenBatchFails(db, (tx) => new GuardedTx(tx).tx, text);
    assert.equal((refused as { code?: string })?.code, 'EFF_NESTED_TRANSACTION', text);
  }
  assert.deepEqual(await idsIn(db, name), [], 'nothing of them committed');
  // a COMMIT behind a comment, sent alone, is a COMMIT with no BEGIN of the handler's: refused too
  const commented = await sentThenBatchFails(db, (tx) => new GuardedTx(tx).tx, '-- the helper ends here\nCOMMIT');
  assert.equal((commented as { code?: string })?.code, 'EFF_NESTED_TRANSACTION');
});

test('what only looks like one passes: the words in strings, quoted names, comments and dollar-quoted bodies', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  await db.transaction(async (tx) => {
    const handlerTx = new GuardedTx(tx).tx;
    await handlerTx.query(`INSERT INTO ${name} VALUES ('x; COMMIT'); INSERT INTO ${name} VALUES (E'y\\'; ROLLBACK')`);
    await handlerTx.query(`INSERT INTO ${name} VALUES ('z') /* ; COMMIT */ -- ; END`);
    await handlerTx.query('DO $body$ BEGIN PERFORM 1; END $body$; SELECT 1');
    await handlerTx.query(`SELECT 1 AS "commit; x"; SELECT $$;rollback$$`);
  });
  assert.deepEqual(await idsIn(db, name), ['x; COMMIT', "y'; ROLLBACK", 'z']);
});

test("naive twin: the same query on the transaction itself commits halfway, and the library's COMMIT answers COMMIT", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  await sentThenBatchFails(db, (tx) => tx, `INSERT INTO ${name} VALUES ('a'); COMMIT`).catch(() => undefined);
  assert.deepEqual(await idsIn(db, name), ['a'], 'committed although the batch failed');
  const client = new pg.Client({ connectionString: defaultDatabaseUrl() });
  await client.connect();
  t.after(() => client.end());
  await client.query('BEGIN');
  await client.query(`INSERT INTO ${name} VALUES ('b'); COMMIT`);
  assert.equal(client.getTransactionStatus(), 'I', 'no transaction open any more');
  assert.equal((await client.query('COMMIT')).command, 'COMMIT', 'a COMMIT with no transaction only warns');
});

test('a library transaction that its own work ended fails instead of reporting it committed', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${name} VALUES ('a'); COMMIT`);
      await tx.query(`INSERT INTO ${name} VALUES ('b')`);
    }),
    { code: 'EFF_NESTED_TRANSACTION' },
  );
});
