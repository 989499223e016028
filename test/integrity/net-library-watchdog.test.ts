// The library's own statements have a short watchdog of their own (`libraryQueryTimeoutMs`), a handler's keep the pool's
// longer one (`queryTimeoutMs`). A COMMIT whose answer is lost (the fault proxy forwards it, then nothing more either
// way) fails with EFF_DB_NO_ANSWER after the short bound, long before the pool's; the naive twin (the library's
// statements on the pool's watchdog, as before this option) is still waiting when the short bound has long passed.
// A handler's statement that runs longer than the short bound is not cut by it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { GuardedTx } from '../../src/consumer/guarded-tx.ts';
import { pgWatchdogs } from '../../src/db/pg.ts';
import { isConnectionLost } from '../../src/db/sqlstate.ts';
import { handlerStatements } from '../../src/db/watchdog.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { proxiedDb } from '../support/proxied-db.ts';
import { needs } from '../support/services.ts';

/** Every bound of the pool a minute: only the library's watchdog (when on) can end the wait within the window. */
const long = { statementTimeoutMs: 60_000, idleInTransactionTimeoutMs: 60_000, queryTimeoutMs: 60_000 };
const shortMs = 400;
/** Ten times the short bound, a sixth of every other one. */
const windowMs = 4_000;

async function commitAnswerLost(t: import('node:test').TestContext, libraryQueryTimeoutMs: number) {
  const { db: direct, schema } = await freshSchema(t);
  await direct.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
  const { db, proxy } = await proxiedDb(t, { ...long, libraryQueryTimeoutMs });
  const sent = db.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${schema}.applied (n) VALUES (1)`);
    void proxy.silenceAfter('COMMIT');
  });
  const outcome = await Promise.race([
    sent.then(
      () => 'committed' as const,
      (error: unknown) => error,
    ),
    sleep(windowMs).then(() => 'pending' as const),
  ]);
  const rows = async () =>
    (await direct.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.applied`)).rows[0]!.n;
  // The proxy closed after the test ends the silent connection; the late outcome of the twin is not waited for.
  sent.catch(() => undefined);
  return { outcome, rows };
}

describe('the library watchdog', { concurrency: 3 }, () => {
  test('a COMMIT whose answer is lost fails with EFF_DB_NO_ANSWER within libraryQueryTimeoutMs', async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { outcome, rows } = await commitAnswerLost(t, shortMs);
    assert.ok(outcome instanceof EffectivelyError, `the transaction failed with a coded error, not ${String(outcome)}`);
    assert.equal(outcome.code, 'EFF_DB_NO_ANSWER');
    assert.deepEqual(outcome.details, { statement: 'COMMIT', timeoutMs: shortMs, watchdog: 'libraryQueryTimeoutMs' });
    assert.equal(outcome.retryable, true);
    assert.equal(isConnectionLost(outcome), true, "a consumer takes it for an outage, not the record's failure");
    // The server did commit: the client could not know (the consumer's dedup rows make trying again safe).
    assert.equal(await rows(), 1, 'the COMMIT reached the server; only its answer was lost');
  });

  test('naive twin: on the pool watchdog alone the transaction is still waiting when the short bound has long passed', async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { outcome, rows } = await commitAnswerLost(t, 0);
    assert.equal(outcome, 'pending', `still waiting for the COMMIT's answer after ${windowMs} ms`);
    assert.equal(await rows(), 1, 'committed on the server all the same');
  });

  test("a handler's statement keeps the pool's longer bound; the library's view of the same transaction is cut", async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { db } = await proxiedDb(t, { ...long, libraryQueryTimeoutMs: shortMs });
    const slow = `SELECT pg_sleep(${(shortMs * 3) / 1000})`;
    await db.transaction(async (tx) => {
      // What a consumer's handler gets (`ctx.tx`): its statements through the pool's watchdog.
      const guarded = new GuardedTx(tx);
      await guarded.tx.query(slow);
      await handlerStatements(tx).query(slow);
    });
    await assert.rejects(
      db.transaction((tx) => tx.query(slow)),
      (error: EffectivelyError) => error.code === 'EFF_DB_NO_ANSWER' && error.details?.statement === 'SELECT',
    );
    await assert.rejects(db.query(slow), (error: EffectivelyError) => error.code === 'EFF_DB_NO_ANSWER');
  });

  // One record per batch and maxAttempts 1: an attempt counted for the silent connection gives the record up at once.
  // The answer to record 1's BEGIN is lost (nothing written, nothing locked): the transaction fails on its watchdog.
  async function consumerMeetsLostBegin(
    t: import('node:test').TestContext,
    watchdogs: object,
    fault: 'silence' | 'reset' = 'silence',
  ) {
    const { db: direct, schema } = await freshSchema(t);
    await direct.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
    const { transport, topic } = await freshTopic(t, 1);
    const { db, proxy } = await proxiedDb(t, { ...long, ...watchdogs });
    let lost: Promise<void> | undefined;
    const consumer = createConsumer({
      db,
      transport,
      group: randomName('g'),
      topics: [topic],
      schema,
      logger: silentLogger,
      maxBatchSize: 1,
      maxAttempts: 1,
      retry: { baseMs: 20, capMs: 100 },
      handler: async (event, { tx }) => {
        const { n } = event.data as { n: number };
        // after record 0's statements, the next BEGIN on this pool is record 1's
        if (n === 0 && !lost) lost = fault === 'silence' ? proxy.silenceAfter('BEGIN') : proxy.resetOn('BEGIN');
        await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [n]);
      },
    });
    t.after(() => consumer.close());
    await consumer.start();
    const producer = transport.producer();
    await producer.send(
      [0, 1, 2].map((n) => encodeEvent(createEvent({ topic, type: 'x', source: '/t', key: 'k', data: { n } }))),
    );
    await producer.close();
    const rows = async (sql: string) => (await direct.query<{ n: number }>(sql)).rows.map((row) => row.n);
    const applied = () => rows(`SELECT n FROM ${schema}.applied ORDER BY n`);
    const dead = () => rows(`SELECT "offset"::int AS n FROM ${schema}.dead_letters ORDER BY 1`);
    await eventually(async () => (await applied()).includes(2), 20_000, 'the record after the silent one settled');
    await sleep(300);
    return { applied: await applied(), dead: await dead(), lost };
  }

  test("a consumer takes its own statement's silence for an outage: no attempt counted, nothing given up", async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    const { applied, dead, lost } = await consumerMeetsLostBegin(t, { libraryQueryTimeoutMs: shortMs });
    assert.ok(lost, 'the BEGIN was sent and its answer lost');
    assert.deepEqual(applied, [0, 1, 2], 'each record applied once');
    assert.deepEqual(dead, [], 'the record whose connection went silent is not a dead letter');
  });

  test("naive twin: the pool's watchdog (a handler's) deciding, the silence counts as the record's attempt", async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    const { applied, dead } = await consumerMeetsLostBegin(t, { libraryQueryTimeoutMs: 0, queryTimeoutMs: shortMs });
    assert.deepEqual(dead, [1], 'given up on as a failure of its own');
    assert.deepEqual(applied, [0, 2], 'its event never applied: lost to a network fault');
  });

  test("a reset of the library's own statement is an outage too, though a new connection answers at once", async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    const { applied, dead, lost } = await consumerMeetsLostBegin(t, { libraryQueryTimeoutMs: shortMs }, 'reset');
    assert.ok(lost, "record 1's BEGIN met a reset");
    assert.deepEqual(applied, [0, 1, 2], 'each record applied once');
    assert.deepEqual(dead, [], 'nothing given up on');
  });

  test("naive twin: the library's statements not known apart (the probe decides), the reset is the record's attempt", async (t) => {
    if (!(await needs(t, 'kafka', 'postgres'))) return;
    const { applied, dead } = await consumerMeetsLostBegin(t, { libraryQueryTimeoutMs: 0 }, 'reset');
    assert.deepEqual(dead, [1], 'given up on as a failure of its own');
    assert.deepEqual(applied, [0, 2], 'its event never applied: lost to a reset');
  });

  test('defaults: 10 s for the library, the pool watchdog for handlers, off with the pool watchdog', () => {
    assert.deepEqual(pgWatchdogs({}), { queryTimeoutMs: 90_000, libraryQueryTimeoutMs: 10_000 });
    assert.deepEqual(pgWatchdogs({ queryTimeoutMs: 800 }), { queryTimeoutMs: 800, libraryQueryTimeoutMs: 800 });
    assert.deepEqual(pgWatchdogs({ statementTimeoutMs: 0 }), { queryTimeoutMs: 0, libraryQueryTimeoutMs: 0 });
    assert.deepEqual(pgWatchdogs({ queryTimeoutMs: 0, libraryQueryTimeoutMs: 5_000 }), {
      queryTimeoutMs: 0,
      libraryQueryTimeoutMs: 5_000,
    });
    assert.throws(() => pgWatchdogs({ libraryQueryTimeoutMs: -1 }), /libraryQueryTimeoutMs/);
  });
});
