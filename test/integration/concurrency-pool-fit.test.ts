// Keys in parallel hold a connection per lane (and per partition in flight). With the defaults (`concurrency.max` 16,
// `pgDb()`'s pool of 4) the lanes waited for each other's connections: 16 lanes asked, 4 ran at once (the twin below
// shows it, on a Db that does not tell its size, as the consumer only warned before), and a handler that took one more
// connection waited for ever. Now a pool the library sized grows to fit at start, and a pool the user sized too small
// is refused at start with EFF_POOL_TOO_SMALL, naming both numbers.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { EffectivelyError, ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually } from '../support/fixtures.ts';
import { type OrdersWorld, ordersWorld, rendezvous, sendKeys, startError, unsized } from '../support/lanes.ts';
import { needs } from '../support/services.ts';

const LANES = 16;

/** A consumer of `LANES` key lanes of `orders` on `db`. */
function lanesOn(db: Db, { schema, transport }: OrdersWorld, handler: () => Promise<void> = async () => undefined) {
  return createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    retention: false,
    concurrency: { mode: 'key', max: LANES },
    handler,
  });
}

/** Starts a consumer of `LANES` key lanes on `consumerDb` over one batch of `LANES` keys; the most handlers at once. */
async function mostAtOnce(t: TestContext, db: Db, consumerDb: Db = db): Promise<number> {
  const w = await ordersWorld(t, db);
  await sendKeys(w, LANES);
  const meet = rendezvous(LANES, 1000);
  const consumer = lanesOn(consumerDb, w, meet.handler);
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => meet.done() >= LANES, 30_000, 'every record handled');
  await consumer.close();
  return meet.most();
}

test('a pool the library sized grows to the lanes asked for: 16 lanes run 16 at once', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb();
  assert.equal(db.connections, 4, "pgDb()'s own size before a consumer starts");
  assert.equal(await mostAtOnce(t, db), LANES);
  assert.equal(db.connections, LANES + 1, 'a connection per lane and one for queries outside them');
});

test('twin: the old setup, a pool of 4 the consumer cannot size, runs 16 lanes at most 4 at once', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: 4 });
  const most = await mostAtOnce(t, db, unsized(db));
  t.diagnostic(`16 lanes asked, ${most} ran at once`);
  assert.ok(most <= 4 && most < LANES, `16 lanes asked, ${most} ran at once`);
});

async function startOn(t: TestContext, max: number): Promise<unknown> {
  const db = pgDb({ max });
  const consumer = lanesOn(db, await ordersWorld(t, db));
  t.after(() => consumer.close());
  return startError(consumer.start());
}

test('a pool the user sized too small is refused at start, with both numbers and the two ways out', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const error = await startOn(t, LANES);
  assert.ok(error instanceof EffectivelyError, `refused at start: ${String(error)}`);
  assert.equal(error.code, ErrorCodes.EFF_POOL_TOO_SMALL);
  assert.deepEqual(error.details, { group: 'g', pool: LANES, transactionsAtOnce: LANES, needed: LANES + 1 });
  assert.match(error.message, /has 16 connections.*16 transactions at once.*17 needed/);
  assert.match(error.message, /pgDb\(\{ max: 17 \}\).*lower concurrency\.max\/concurrency\.partitions/);
});

test('twin: a pool one connection larger than the lanes starts', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.equal(await startOn(t, LANES + 1), undefined);
});
