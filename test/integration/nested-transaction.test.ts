// A database of one session (PGlite) asked for a transaction or a query from inside one of its own transactions
// (issue 38, hole 2). Before the guard that work waited for ever for the session the outer transaction held, and
// every other user of the process's database with it: the first `outbox.enqueue` through a serde whose schema was not
// yet registered hung the process (the embedded registry opened its own transaction). Now it is refused at once with
// EFF_NESTED_TRANSACTION, the registry's refusal says to register at start-up, and `serde.register(topic)` at start-up
// makes the enqueue work. On the PostgreSQL server (a pool of several connections) the registry takes another
// connection: the same enqueue registers and is published. The naive twin is PGlite without the guard: it hangs.
// A server pool of one connection (`pgDb({ max: 1 })`) had the same wait, bounded only by the pool's connection
// timeout (10 s by default, none on a pool of your own), and is guarded the same way; its twin, unguarded, waits.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, type TestContext, test } from 'node:test';
import pg from 'pg';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb, pgPoolConfig, poolDb } from '../../src/db/pg.ts';
import { pgliteDb, unguardedForTests } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const avsc = readFileSync(new URL('../../examples/schemas/order-confirmed/v1.avsc', import.meta.url), 'utf8');
const order = {
  orderId: 'order-1',
  orderNo: 1,
  customerEmail: 'c1@example.org',
  total: 1001,
  seats: ['A1'],
  confirmedAt: Date.UTC(2026, 11, 2),
};
const event = () =>
  createEvent({ topic: 'orders', type: 'OrderConfirmed', source: '/boxoffice', key: 'o-1', data: order });

/** A hang fails the test: the bound leaves room for PGlite's start (the first test's) on a loaded machine (30 s was cut). */
const hangMs = 120_000;

let embedded: Promise<Db> | undefined;
after(async () => (await embedded)?.close());
const pglite = () => {
  embedded ??= pgliteDb();
  return embedded;
};

/** Settles with the promise, or with 'pending' when it has not settled once `ms` have passed. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> =>
  Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);

const count = async (db: Db, schema: string) =>
  Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]!.n);

test(
  'pglite: a transaction or query asked of the Db inside its own transaction is refused at once; the rest is not',
  { timeout: hangMs },
  async () => {
    const db = await pglite();
    await assert.rejects(
      db.transaction(async () => db.query('SELECT 1')),
      (error: { code?: string; details?: { operation?: string } }) =>
        error.code === 'EFF_NESTED_TRANSACTION' && error.details?.operation === 'query',
    );
    await assert.rejects(
      db.transaction(async () => db.transaction(async (tx) => tx.query('SELECT 1'))),
      (error: { code?: string }) => error.code === 'EFF_NESTED_TRANSACTION',
    );
    // Transactions of other chains of calls wait their turn as before (a relay, a consumer of the same process).
    const turns = await Promise.all(
      [1, 2, 3].map((n) =>
        db.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT $1::int AS n', [n])).rows[0]!.n),
      ),
    );
    assert.deepEqual(turns, [1, 2, 3]);
    // Work a transaction left behind (a timer started inside it) is not refused once that transaction is over.
    let later: Promise<unknown> | undefined;
    await db.transaction(async () => {
      later = new Promise((resolve, reject) => setTimeout(() => db.query('SELECT 1').then(resolve, reject), 20));
    });
    assert.ok(await later);
  },
);

test(
  'pglite: the first enqueue through a serde is refused at once (register at start-up); after serde.register it is written',
  { timeout: hangMs },
  async () => {
    const db = await pglite();
    const schema = randomName('nested');
    await migrate(db, { schema });
    const serde = avroSerde({ registry: postgresSchemaRegistry({ db, schema }), schema: avsc });
    const outbox = createOutbox({ schema, notify: false, serde });
    await assert.rejects(
      db.transaction((tx) => outbox.enqueue(tx, event())),
      (error: { code?: string; message: string; details?: { subject?: string } }) =>
        error.code === 'EFF_NESTED_TRANSACTION' &&
        error.details?.subject === 'orders-value' &&
        error.message.includes('serde.register(topic)'),
    );
    assert.equal(await count(db, schema), 0, 'the caller transaction rolled back');
    await serde.register('orders');
    await db.transaction((tx) => outbox.enqueue(tx, event()));
    assert.equal(await count(db, schema), 1);
  },
);

test(
  'pglite, autoRegister off: the look-up inside enqueue is refused at once as well',
  { timeout: hangMs },
  async () => {
    const db = await pglite();
    const schema = randomName('nested');
    await migrate(db, { schema });
    const registry = postgresSchemaRegistry({ db, schema });
    await registry.register('orders-value', avsc, 'avro');
    const serde = avroSerde({ registry: postgresSchemaRegistry({ db, schema }), schema: avsc, autoRegister: false });
    const outbox = createOutbox({ schema, notify: false, serde });
    await assert.rejects(
      db.transaction((tx) => outbox.enqueue(tx, event())),
      { code: 'EFF_NESTED_TRANSACTION' },
    );
    await serde.register('orders');
    await db.transaction((tx) => outbox.enqueue(tx, event()));
    assert.equal(await count(db, schema), 1);
  },
);

test('server: the first enqueue through a serde registers on another connection of the pool and is written', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const serde = avroSerde({ registry: postgresSchemaRegistry({ db, schema }), schema: avsc });
  const outbox = createOutbox({ schema, notify: false, serde });
  await db.transaction((tx) => outbox.enqueue(tx, event()));
  assert.equal(await count(db, schema), 1);
});

test('naive twin, pglite without the guard: the first enqueue through a serde never settles, and the database answers nobody', async () => {
  // Not closed: its only session is held for ever by the enqueue (close would wait on it too). Not migrated either:
  // the registration waits for the session before its first statement.
  const db = await pgliteDb({ [unguardedForTests]: true });
  const schema = 'nested_naive';
  const serde = avroSerde({ registry: postgresSchemaRegistry({ db, schema }), schema: avsc });
  const outbox = createOutbox({ schema, notify: false, serde });
  const enqueue = db.transaction((tx) => outbox.enqueue(tx, event()));
  enqueue.catch(() => undefined);
  assert.equal(await within(enqueue, 1500), 'pending', 'the enqueue waits for the session it holds');
  assert.equal(await within(db.query('SELECT 1'), 500), 'pending', 'and every other user of the database waits');
});

/** A pool of one connection to the test server, closed after the test. */
function oneConnection(t: TestContext, guarded: boolean, connectionTimeoutMs = 10_000): Db {
  const db = guarded
    ? pgDb({ max: 1, connectionTimeoutMs })
    : poolDb(new pg.Pool({ ...pgPoolConfig({ connectionTimeoutMs }), max: 1 }), { ownsPool: true, guarded: false });
  t.after(() => db.close());
  return db;
}

test('server, pgDb({ max: 1 }): a transaction or query inside its own transaction is refused at once; the rest is not', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = oneConnection(t, true);
  const started = Date.now();
  await assert.rejects(
    db.transaction(async () => db.query('SELECT 1')),
    (error: { code?: string; details?: { operation?: string } }) =>
      error.code === 'EFF_NESTED_TRANSACTION' && error.details?.operation === 'query',
  );
  await assert.rejects(
    db.transaction(async () => db.transaction(async (tx) => tx.query('SELECT 1'))),
    (error: { code?: string; details?: { operation?: string } }) =>
      error.code === 'EFF_NESTED_TRANSACTION' && error.details?.operation === 'transaction',
  );
  assert.ok(Date.now() - started < 2000, `refused at once, not after a wait (${Date.now() - started} ms)`);
  // Other chains of calls take turns on the one connection, as before.
  const turns = await Promise.all(
    [1, 2, 3].map((n) =>
      db.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT $1::int AS n', [n])).rows[0]!.n),
    ),
  );
  assert.deepEqual(turns, [1, 2, 3]);
  let later: Promise<unknown> | undefined;
  await db.transaction(async () => {
    later = new Promise((resolve, reject) => setTimeout(() => db.query('SELECT 1').then(resolve, reject), 20));
  });
  assert.ok(await later);
  // A pool of several connections is not guarded: the nested query takes another connection.
  const pool = pgDb({ max: 2 });
  t.after(() => pool.close());
  const nested = await pool.transaction(async () => (await pool.query<{ n: number }>('SELECT 7 AS n')).rows[0]!.n);
  assert.equal(nested, 7);
});

test('server, pgDb({ max: 1 }): the first enqueue through a serde is refused at once; after serde.register it is written', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const db = oneConnection(t, true);
  const serde = avroSerde({ registry: postgresSchemaRegistry({ db, schema }), schema: avsc });
  const outbox = createOutbox({ schema, notify: false, serde });
  await assert.rejects(
    db.transaction((tx) => outbox.enqueue(tx, event())),
    (error: { code?: string; message: string }) =>
      error.code === 'EFF_NESTED_TRANSACTION' && error.message.includes('serde.register(topic)'),
  );
  await serde.register('orders');
  await db.transaction((tx) => outbox.enqueue(tx, event()));
  assert.equal(await count(db, schema), 1);
});

test('naive twin, server pool of one connection without the guard: the nested query waits, and so does everyone else', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  // The pool's connection timeout is the only bound of the wait (here 2 s; 10 s by default, none on a pool of yours).
  const db = oneConnection(t, false, 2000);
  let nested: Promise<unknown> | undefined;
  const outer = db.transaction(async () => {
    nested = db.query('SELECT 1');
    return nested;
  });
  outer.catch(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await within(outer, 800), 'pending', 'the nested query waits for the connection its caller holds');
  assert.equal(await within(db.query('SELECT 1'), 400), 'pending', 'and every other user of the Db waits');
  await assert.rejects(outer, (error: { code?: string }) => error.code !== 'EFF_NESTED_TRANSACTION');
});
