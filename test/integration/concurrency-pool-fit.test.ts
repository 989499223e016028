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
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError, ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const LANES = 16;

async function world(t: TestContext, db: Db) {
  const { schema } = await freshSchema(t);
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 50, logger: silentLogger });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  return { schema, transport };
}

/** A consumer of `LANES` key lanes of `orders` on `db`. */
function lanesOn(
  db: Db,
  { schema, transport }: Awaited<ReturnType<typeof world>>,
  handler: () => Promise<void> = async () => undefined,
) {
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
  const w = await world(t, db);
  const producer = w.transport.producer();
  await producer.send(
    Array.from({ length: LANES }, (_, n) =>
      encodeEvent(createEvent({ topic: 'orders', type: 'pool.test', source: '/pool', key: `k${n}`, data: { n } })),
    ),
  );
  await producer.close();
  let running = 0;
  let most = 0;
  let done = 0;
  let allIn: () => void = () => undefined;
  const everyLaneIn = new Promise<void>((resolve) => {
    allIn = resolve;
  });
  const consumer = lanesOn(consumerDb, w, async () => {
    running += 1;
    most = Math.max(most, running);
    if (running === LANES) allIn();
    // each handler waits (in its transaction) until every lane is in, or 1 s: lanes that cannot all be in at once
    // still end, and `most` says how many were
    await Promise.race([everyLaneIn, new Promise((resolve) => setTimeout(resolve, 1000))]);
    running -= 1;
    done += 1;
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => done >= LANES, 30_000, 'every record handled');
  await consumer.close();
  return most;
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
  // the same pool behind a Db that does not tell its size: the consumer cannot check it, as it only warned before
  const unsized: Db = {
    query: (text, params) => db.query(text, params),
    transaction: (work) => db.transaction(work),
    close: () => Promise.resolve(),
  };
  const most = await mostAtOnce(t, db, unsized);
  t.diagnostic(`16 lanes asked, ${most} ran at once`);
  assert.ok(most <= 4 && most < LANES, `16 lanes asked, ${most} ran at once`);
});

async function startOn(t: TestContext, max: number): Promise<unknown> {
  const db = pgDb({ max });
  const consumer = lanesOn(db, await world(t, db));
  t.after(() => consumer.close());
  return consumer.start().then(
    () => undefined,
    (error: unknown) => error,
  );
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
