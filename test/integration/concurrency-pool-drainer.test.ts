// A key-ordered consumer (`keyOrdered`) runs its drainer beside the lanes: the records parked behind a released hold are
// applied in a transaction of the drainer's own, on the drainer's timer, while the lanes run theirs. The pool fit
// counted only the lanes (lanes × partitions + 1), so the drainer's transaction took the one connection kept for a
// handler's own query: with every lane and the drainer in a handler that asks for a connection of its own, none is
// left and each waits for the pool's `connectionTimeoutMs`. Now the drainer is counted: lanes + drainer + 1.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Outcome } from '../../src/consumer/types.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { EffectivelyError, ErrorCodes, PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually } from '../support/fixtures.ts';
import { keyedEvent as make, ordersWorld, startError, unsized } from '../support/lanes.ts';
import { needs } from '../support/services.ts';

// more than pgDb()'s own 4, so the library grows its pool to what the consumer counts
const LANES = 4;

/**
 * Holds key `held` (its first record dead), parks its second, then fills the `LANES` lanes with handlers that wait for
 * the drainer's, discards the dead letter, and lets every handler take a connection of its own at once. Returns the
 * errors of those queries.
 */
async function drainerBesideLanes(t: TestContext, db: Db, consumerDb: Db = db): Promise<unknown[]> {
  const { schema, transport } = await ordersWorld(t, db);
  const outcomes: Outcome[] = [];
  const errors: unknown[] = [];
  let inside = 0;
  let done = 0;
  const consumer = createConsumer({
    db: consumerDb,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    retention: false,
    keyOrdered: true,
    drainIntervalMs: 50,
    concurrency: { mode: 'key', max: LANES },
    handler: async (event) => {
      const { key, v } = event.data as { key: string; v: number };
      if (key === 'held' && v === 1) throw new PermanentError('holds its key');
      inside += 1;
      // every lane and the drainer in a handler at once (or 10 s), then each asks for a connection of its own
      await eventually(async () => inside === LANES + 1, 10_000, 'the lanes and the drainer in a handler').catch(
        () => undefined,
      );
      await db.query('SELECT 1').catch((error: unknown) => errors.push(error));
      done += 1;
    },
    onOutcome: (_event, outcome) => outcomes.push(outcome),
  });
  t.after(() => consumer.close());
  await consumer.start();
  const producer = transport.producer();
  t.after(() => producer.close());
  const store = deadLetterStore({ schema });
  await producer.send([make('held', 1)]);
  await eventually(async () => (await store.list(db)).length === 1, 30_000, 'the holder dead');
  await producer.send([make('held', 2)]);
  await eventually(async () => outcomes.includes('parked'), 30_000, 'the second record of the key parked');
  await producer.send(Array.from({ length: LANES }, (_, n) => make(`k${n}`, 1)));
  await eventually(async () => inside === LANES, 30_000, 'every lane in a handler');
  await store.discard(db, [(await store.list(db))[0]!.id]);
  await eventually(async () => done === LANES + 1, 60_000, 'the lanes and the parked record handled');
  await consumer.close();
  return errors;
}

test('keyOrdered: a pool the library sized fits the drainer too; lanes and drainer each take a connection of their own', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ connectionTimeoutMs: 1000 });
  const errors = await drainerBesideLanes(t, db);
  assert.deepEqual(errors.map(String), [], "no handler's own query waited out the pool");
  assert.equal(db.connections, LANES + 2, 'a connection per lane, one for the drainer, one for queries outside them');
});

test("twin: a pool of lanes + 1 (the drainer uncounted) leaves a handler's own query no connection", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: LANES + 1, connectionTimeoutMs: 1000 });
  // behind a Db that does not tell its size, so the consumer cannot refuse it
  const errors = await drainerBesideLanes(t, db, unsized(db));
  t.diagnostic(`${errors.length} of ${LANES + 1} own queries failed: ${String(errors[0])}`);
  assert.ok(errors.length > 0, "a handler's own query waited out the pool's connectionTimeoutMs");
});

test('keyOrdered: a pool the user sized for the lanes only is refused at start, the drainer counted', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: LANES + 1 });
  const { schema, transport } = await ordersWorld(t, db);
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    retention: false,
    keyOrdered: true,
    concurrency: { mode: 'key', max: LANES },
    handler: async () => undefined,
  });
  t.after(() => consumer.close());
  const error = await startError(consumer.start());
  assert.ok(error instanceof EffectivelyError, `refused at start: ${String(error)}`);
  assert.equal(error.code, ErrorCodes.EFF_POOL_TOO_SMALL);
  assert.deepEqual(error.details, { group: 'g', pool: LANES + 1, transactionsAtOnce: LANES + 1, needed: LANES + 2 });
});
