// The WAL relay's `drain()` counts every row it published. A batch's rows leave the table when their delete commits,
// and are counted when its answer comes back: a drain that looked only at the table returned between the two, one
// batch short. Private cluster with logical decoding, real broker; the answer to the relay's delete is held 1 s (a
// slow network or a busy event loop), so the naive twin (`drain-before-counted`) returns before the count.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { Db, Queryable } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import type { WalOptions } from '../../src/outbox/relay-options.ts';
import { eventually, freshTopic } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { walClusterPerFile } from '../support/wal-cluster.ts';
import { startedWalRelay } from '../support/wal-relay.ts';

const cluster = walClusterPerFile();

/** The same database; the answer to a delete of outbox rows arrives `delayMs` after the server committed it. */
function slowDeleteAnswers(db: Db, delayMs: number): Db {
  const slowed = async <R extends Record<string, unknown>>(on: Queryable, text: string, params?: unknown[]) => {
    const answer = await on.query<R>(text, params);
    if (/DELETE FROM \S+\.outbox WHERE seq/.test(text)) await sleep(delayMs);
    return answer;
  };
  return {
    query: (text, params) => slowed(db, text, params),
    transaction: (work) => db.transaction((tx) => work({ query: (text, params) => slowed(tx, text, params) })),
    close: () => db.close(),
  };
}

/** 100 rows in one transaction written once the slot streams, then `drain()`; returns its count. */
async function drained(t: TestContext, unsafe?: WalOptions['unsafe']) {
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 1);
  const relay = await startedWalRelay(t, cluster(), slowDeleteAnswers(db, 1000), schema, transport, {
    ...(unsafe ? { unsafe } : {}),
  });
  const events = Array.from({ length: 100 }, (_, n) =>
    createEvent({ topic, type: 't', source: '/wal', key: 'k', data: { n } }),
  );
  await db.transaction((tx) => createOutbox({ schema }).enqueue(tx, events));
  const count = await relay.drain(10_000);
  await eventually(async () => relay.stats().published === 100, 10_000, 'the 100 rows counted');
  return count;
}

test('drain() returns once its rows are counted: every row it published', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  assert.equal(await drained(t), 100, 'the count drain() returned');
});

test('naive twin (returns once the table is empty) is one batch short', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  assert.equal(await drained(t, 'drain-before-counted'), 0, 'the batch deleted and not yet counted');
});
