// Texts whose COMMIT only the server's own lexical rules reveal, on the real PostgreSQL: a line comment a lone \r
// ends, an E string continued on the next line, a dollar-quote tag longer than 62 characters, a string read with
// standard_conforming_strings off. The handler's view of the transaction refuses each before anything runs. Naive
// twin: the same text on the transaction itself commits its INSERT although the batch then fails. And what only looks
// like one (DO blocks, function bodies, strings holding ';commit') still runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GuardedTx } from '../../src/consumer/guarded-tx.ts';
import type { Db } from '../../src/db/port.ts';
import { freshSchema, idsIn, idTable } from '../support/fixtures.ts';
import { sentThenBatchFails } from '../support/handler-tx.ts';
import { needs } from '../support/services.ts';

const tag = 'q'.repeat(70);

/** [the setting sent first on the transaction itself, the text the handler sends] */
const hiding = (name: string): [string | undefined, string][] => [
  [undefined, `INSERT INTO ${name} VALUES ('cr') --x\r; COMMIT`],
  [undefined, `INSERT INTO ${name} VALUES (E'x'\n'\\''); COMMIT; SELECT ''`],
  [undefined, `INSERT INTO ${name} VALUES ($${tag}$'q$${tag}$); COMMIT; SELECT ''`],
  ['SET LOCAL standard_conforming_strings = off', `INSERT INTO ${name} VALUES ('\\''); COMMIT; SELECT ''`],
];

async function setup(t: Parameters<typeof freshSchema>[0]): Promise<{ db: Db; name: string }> {
  const { db, schema } = await freshSchema(t);
  return { db, name: await idTable(db, schema) };
}

test('a COMMIT only the server lexical rules reveal is refused on ctx.tx before anything runs', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, name } = await setup(t);
  for (const [setting, text] of hiding(name)) {
    const refused = await sentThenBatchFails(db, (tx) => new GuardedTx(tx).tx, text, setting);
    assert.equal((refused as { code?: string })?.code, 'EFF_NESTED_TRANSACTION', JSON.stringify(text));
  }
  assert.deepEqual(await idsIn(db, name), [], 'nothing of them committed');
});

test('naive twin: the same texts on the transaction itself commit their INSERT although the batch fails', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, name } = await setup(t);
  for (const [setting, text] of hiding(name)) await sentThenBatchFails(db, (tx) => tx, text, setting);
  assert.deepEqual(await idsIn(db, name), ["'", "'q", 'cr', "x'"].sort());
});

test('legit texts that hold the words still run on ctx.tx', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, name } = await setup(t);
  const fn = `${name}_f`;
  await db.transaction(async (tx) => {
    const handlerTx = new GuardedTx(tx).tx;
    await handlerTx.query(`DO $${tag}$ BEGIN INSERT INTO ${name} VALUES ('do;commit'); END $${tag}$; SELECT 1`);
    await handlerTx.query(
      `CREATE FUNCTION ${fn}() RETURNS text LANGUAGE sql AS $fn$ SELECT ';commit' $fn$; INSERT INTO ${name} VALUES (${fn}())`,
    );
    await handlerTx.query(`INSERT INTO ${name} VALUES (E'a\\';'\n' ;rollback'), (U&'\\0062;end') -- x\r; SELECT 1`);
  });
  assert.deepEqual(await idsIn(db, name), [';commit', "a'; ;rollback", 'b;end', 'do;commit']);
});

test('PGlite reports the transaction status too: a transaction its own work ended fails there as on pgDb', async () => {
  const { pgliteDb } = await import('../../src/db/pglite.ts');
  const db = await pgliteDb();
  try {
    await db.query('CREATE TABLE rows (id text)');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO rows VALUES ('a'); COMMIT");
        await tx.query("INSERT INTO rows VALUES ('b')");
      }),
      { code: 'EFF_NESTED_TRANSACTION' },
    );
    // naive twin: PGlite itself answers the COMMIT after it without an error
    const pglite = db.pglite as { exec(sql: string): Promise<unknown> };
    await pglite.exec("BEGIN; INSERT INTO rows VALUES ('c'); COMMIT; INSERT INTO rows VALUES ('d')");
    await assert.doesNotReject(pglite.exec('COMMIT'));
  } finally {
    await db.close();
  }
});
