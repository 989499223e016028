// Several consumers on one library pool (a service with two groups, one `pgDb()`): each transaction in flight of each
// consumer holds a connection. The pool fit counted one consumer at a time: the second consumer of 16 lanes found the
// pool already at 17 (fitted to the first) and left it there, so 32 lanes shared 17 connections (about half ran), and
// a pool the user sized for one consumer was not refused for two. Now the pool fits the sum of the consumers started on
// it (and a closed consumer's share is given back: a restart in the same process is not refused).
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

type World = Awaited<ReturnType<typeof world>>;

function lanesOn(db: Db, w: World, group: string, handler: () => Promise<void> = async () => undefined) {
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
  // each handler waits in its transaction until every lane of both consumers is in, or 2 s
  const handler = async () => {
    running += 1;
    most = Math.max(most, running);
    if (running === 2 * LANES) allIn();
    await Promise.race([everyLaneIn, new Promise((resolve) => setTimeout(resolve, 2000))]);
    running -= 1;
    done += 1;
  };
  const consumers = [lanesOn(db, w, 'g1', handler), lanesOn(db, w, 'g2', handler)];
  t.after(() => Promise.all(consumers.map((consumer) => consumer.close())));
  await Promise.all(consumers.map((consumer) => consumer.start()));
  await eventually(async () => done >= 2 * LANES, 60_000, 'every record handled by both groups');
  t.diagnostic(`pool ${db.connections}, ${2 * LANES} lanes asked, ${most} ran at once`);
  assert.equal(db.connections, 2 * LANES + 1, 'one connection per lane of each consumer, one for queries outside');
  assert.equal(most, 2 * LANES, 'every lane of both consumers ran at once');
});

test('a pool the user sized for one consumer of 16 lanes refuses a second one at start', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: LANES + 1 });
  const w = await world(t, db);
  const first = lanesOn(db, w, 'g1');
  const second = lanesOn(db, w, 'g2');
  t.after(() => Promise.all([first.close(), second.close()]));
  await first.start();
  const error = await second.start().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
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
  const w = await world(t, db);
  const first = lanesOn(db, w, 'g1');
  await first.start();
  await first.close();
  const again = lanesOn(db, w, 'g1');
  t.after(() => again.close());
  await again.start();
  assert.equal(db.connections, LANES + 1);
});
