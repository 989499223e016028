// A handler that runs its own BEGIN / COMMIT / ROLLBACK on `ctx.tx` (a `withTransaction(client, fn)` helper of its
// codebase) on the real PostgreSQL. Sent as they are, the helper's COMMIT commits the consumer's transaction halfway
// (the whole batch's dedup rows with it, so a later failure of the batch is retried as "already done": records lost),
// and its ROLLBACK rolls back the records before it while the library's COMMIT still says COMMIT. The handler's view
// turns them into a savepoint, its release and its rollback, and refuses the ones no savepoint can stand for.
// The end-to-end case, on every transport, is in test/conformance/handler-mistakes.test.ts.
// Naive twin: the same helper on the library's transaction itself commits the outer work halfway.
// ctx.savepoint called twice at once (Promise.all) interleaved its savepoints the same way: they now take turns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GuardedTx } from '../../src/consumer/guarded-tx.ts';
import type { Db, Queryable } from '../../src/db/port.ts';
import { freshSchema, idsIn, idTable } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

class Rollback extends Error {}

/** The node-postgres habit: its own transaction around `work`, rolled back when `work` throws. */
async function withTransaction(client: Queryable, work: (client: Queryable) => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

/** The outer transaction writes `outer`, the helper `inner`, then the outer one fails. What is left? */
async function helperThenFailure(db: Db, name: string, view: (tx: Queryable) => Queryable): Promise<string[]> {
  await db
    .transaction(async (tx) => {
      const handlerTx = view(tx);
      await handlerTx.query(`INSERT INTO ${name} VALUES ('outer')`);
      await withTransaction(handlerTx, (client) => client.query(`INSERT INTO ${name} VALUES ('inner')`).then());
      throw new Rollback('a later record of the batch fails');
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return idsIn(db, name);
}

test("a handler's own BEGIN / COMMIT on ctx.tx is a savepoint: the consumer's rollback takes it all back", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  assert.deepEqual(await helperThenFailure(db, name, (tx) => new GuardedTx(tx).tx), []);
});

test('naive twin: the same helper on the transaction itself commits the outer work halfway', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  assert.deepEqual(await helperThenFailure(db, name, (tx) => tx), ['inner', 'outer']);
});

test("a handler's own ROLLBACK undoes only its own work; the records before it stay", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  await db.transaction(async (tx) => {
    const handlerTx = new GuardedTx(tx).tx;
    await handlerTx.query(`INSERT INTO ${name} VALUES ('before')`);
    await withTransaction(handlerTx, async (client) => {
      await client.query(`INSERT INTO ${name} VALUES ('undone')`);
      await client.query(`INSERT INTO ${name} VALUES ('before')`); // 23505: "already done"
    }).catch((error: { code?: string }) => assert.equal(error.code, '23505'));
    await handlerTx.query(`INSERT INTO ${name} VALUES ('after')`);
  });
  assert.deepEqual(await idsIn(db, name), ['after', 'before']);
});

test('statements that would end the consumer transaction and no savepoint can stand for are refused', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db } = await freshSchema(t);
  await db.transaction(async (tx) => {
    const guarded = new GuardedTx(tx);
    for (const statement of [
      'COMMIT',
      'rollback',
      'COMMIT AND CHAIN',
      'end and no chain',
      'ROLLBACK  AND CHAIN;',
      "PREPARE TRANSACTION 'x'",
      'BEGIN ISOLATION LEVEL SERIALIZABLE',
      'SET TRANSACTION ISOLATION LEVEL SERIALIZABLE',
    ]) {
      await assert.rejects(guarded.tx.query(statement), { code: 'EFF_NESTED_TRANSACTION' }, statement);
      await assert.rejects(
        guarded.savepoint((inner) => inner.query(statement)),
        { code: 'EFF_NESTED_TRANSACTION' },
        `${statement} in ctx.savepoint`,
      );
    }
    // what passes as it is: savepoints of the handler's own, prepared statements, anything else
    await guarded.tx.query('SAVEPOINT mine');
    await guarded.tx.query('ROLLBACK TO SAVEPOINT mine');
    await guarded.tx.query('RELEASE SAVEPOINT mine');
    await guarded.tx.query('PREPARE two AS SELECT 2');
    assert.equal((await guarded.tx.query<{ n: number }>('SELECT 1 AS n')).rows[0]!.n, 1);
    await guarded.check('the test');
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two units of work at once: `one` writes, waits, and fails (caught); `two` writes and ends first. */
async function twoAtOnce(
  db: Db,
  name: string,
  run: (tx: Queryable) => (id: string, fn: (tx: Queryable) => Promise<void>) => Promise<void>,
) {
  await db.transaction(async (tx) => {
    const savepoint = run(tx);
    const settled = await Promise.allSettled([
      savepoint('one', async (inner) => {
        await inner.query(`INSERT INTO ${name} VALUES ('one')`);
        await sleep(100);
        throw new Rollback('one fails, and the handler catches it');
      }),
      savepoint('two', async (inner) => {
        await inner.query(`INSERT INTO ${name} VALUES ('two')`);
        await sleep(20);
      }),
    ]);
    assert.deepEqual(
      settled.map((result) => result.status),
      ['rejected', 'fulfilled'],
    );
  });
  return idsIn(db, name);
}

test('ctx.savepoint called twice at once: they take turns, the one that ended well keeps its work', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  const kept = await twoAtOnce(db, name, (tx) => {
    const guarded = new GuardedTx(tx);
    return (_id, fn) => guarded.savepoint(fn);
  });
  assert.deepEqual(kept, ['two']);
  // a call from inside one nests in it (no wait for itself)
  await db.transaction(async (tx) => {
    const guarded = new GuardedTx(tx);
    await guarded.savepoint(async () => {
      await Promise.all(
        [1, 2].map((n) => guarded.savepoint((inner) => inner.query(`INSERT INTO ${name} VALUES ('n${n}')`))),
      );
    });
  });
  assert.deepEqual(await idsIn(db, name), ['n1', 'n2', 'two']);
});

test('naive twin: the same two savepoints sent as they come interleave on the one connection: "two" is lost', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const name = await idTable(db, schema);
  const kept = await twoAtOnce(db, name, (tx) => async (id, fn) => {
    await tx.query(`SAVEPOINT sp_${id}`);
    try {
      await fn(tx);
    } catch (error) {
      await tx.query(`ROLLBACK TO SAVEPOINT sp_${id}`);
      throw error;
    }
    await tx.query(`RELEASE SAVEPOINT sp_${id}`);
  });
  assert.deepEqual(kept, []);
});
