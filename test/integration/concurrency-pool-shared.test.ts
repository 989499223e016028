// Several consumers on one library pool (a service with two groups, one `pgDb()`): each transaction in flight of each
// consumer holds a connection. The pool fit counted one consumer at a time: the second consumer of 16 lanes found the
// pool already at 17 (fitted to the first) and left it there, so 32 lanes shared 17 connections (about half ran), and
// a pool the user sized for one consumer was not refused for two. Now the pool fits the sum of the consumers started on
// it (and a closed consumer's share is given back: a restart in the same process is not refused).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { EffectivelyError, ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually } from '../support/fixtures.ts';
import { type OrdersWorld, ordersWorld, rendezvous, sendKeys, startError } from '../support/lanes.ts';
import { needs } from '../support/services.ts';

const LANES = 16;

function lanesOn(db: Db, w: OrdersWorld, group: string, handler: () => Promise<void> = async () => undefined) {
  return createConsumer({
    db,
    transport: w.transport,
    group,
    topics: ['orders'],
    schema: w.schema,
    logger: silentLogger,
    retention: false,
    concurrency: { mode: 'key', max: LANES },
    handler,
  });
}

test('two consumers of 16 lanes on one pool the library sized: the pool fits both, 32 lanes run at once', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb();
  const w = await ordersWorld(t, db);
  await sendKeys(w, LANES);
  // each handler waits in its transaction until every lane of both consumers is in, or 2 s
  const meet = rendezvous(2 * LANES, 2000);
  const consumers = [lanesOn(db, w, 'g1', meet.handler), lanesOn(db, w, 'g2', meet.handler)];
  t.after(() => Promise.all(consumers.map((consumer) => consumer.close())));
  await Promise.all(consumers.map((consumer) => consumer.start()));
  await eventually(async () => meet.done() >= 2 * LANES, 60_000, 'every record handled by both groups');
  t.diagnostic(`pool ${db.connections}, ${2 * LANES} lanes asked, ${meet.most()} ran at once`);
  assert.equal(db.connections, 2 * LANES + 1, 'one connection per lane of each consumer, one for queries outside');
  assert.equal(meet.most(), 2 * LANES, 'every lane of both consumers ran at once');
});

test('a pool the user sized for one consumer of 16 lanes refuses a second one at start', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: LANES + 1 });
  const w = await ordersWorld(t, db);
  const first = lanesOn(db, w, 'g1');
  const second = lanesOn(db, w, 'g2');
  t.after(() => Promise.all([first.close(), second.close()]));
  await first.start();
  const error = await startError(second.start());
  assert.ok(error instanceof EffectivelyError, `refused at start: ${String(error)}`);
  assert.equal(error.code, ErrorCodes.EFF_POOL_TOO_SMALL);
  assert.deepEqual(error.details, {
    group: 'g2',
    pool: LANES + 1,
    transactionsAtOnce: 2 * LANES,
    needed: 2 * LANES + 1,
  });
});

test('twin: a consumer closed and made again in the same process on that pool starts (its share was given back)', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: LANES + 1 });
  const w = await ordersWorld(t, db);
  const first = lanesOn(db, w, 'g1');
  await first.start();
  await first.close();
  const again = lanesOn(db, w, 'g1');
  t.after(() => again.close());
  await again.start();
  assert.equal(db.connections, LANES + 1);
});
