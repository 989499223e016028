// A handler's own query sent through the Db itself (`db.query`, outside `ctx.tx`: the pool fit keeps a connection for
// it) is on the library's short watchdog (`libraryQueryTimeoutMs`). When it runs longer, every time (a slow report,
// a lock a long transaction holds), its EFF_DB_NO_ANSWER was taken for an outage of the library's own statement: no
// attempt counted, the record never given up on, the partition retried for ever under "database unreachable" while
// the database answered. A handler's failure, with the database answering, is the record's: counted, dead-lettered.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** One record whose handler sends `statement` through `db.query`; resolves with the dead letters and the attempts. */
async function slowHandlerQuery(t: TestContext, db: Db, statement: string) {
  const { schema } = await freshSchema(t);
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 50, logger: silentLogger });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const producer = transport.producer();
  await producer.send([
    encodeEvent(createEvent({ topic: 'orders', type: 'slow.test', source: '/slow', key: 'k', data: { n: 1 } })),
  ]);
  await producer.close();
  let calls = 0;
  const letters: unknown[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    retention: false,
    maxAttempts: 2,
    retry: { baseMs: 10, capMs: 50 },
    onDeadLetter: (letter) => letters.push(letter.error),
    handler: async () => {
      calls += 1;
      await db.query(statement);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  return { letters: () => letters, calls: () => calls };
}

test("a handler's own db.query past libraryQueryTimeoutMs, every time, is the record's failure: dead-lettered", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const run = await slowHandlerQuery(t, pgDb({ libraryQueryTimeoutMs: 200 }), 'SELECT pg_sleep(0.6)');
  await eventually(async () => run.letters().length === 1, 20_000, 'dead-lettered').catch((error: Error) => {
    throw new Error(`${error.message}: the handler was called ${run.calls()} times, no attempt counted`);
  });
  assert.equal((run.letters()[0] as { code?: string }).code, 'EFF_DB_NO_ANSWER');
});

test('twin: the same handler on a watchdog longer than its query applies the record, no dead letter', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const run = await slowHandlerQuery(t, pgDb({ libraryQueryTimeoutMs: 5000 }), 'SELECT pg_sleep(0.6)');
  await eventually(async () => run.calls() === 1, 20_000, 'handler called');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(run.letters().length, 0);
});
