// Issue 28 item 9: the relay's health check (isRunning, stats) and its line at start. PGlite in process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { createEvent } from '../../src/envelope/event.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

test('relay: isRunning from start to close, stats count what it published, an info line at start', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db);
  const transport = postgresTransport({ db });
  const infos: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: (message) => void infos.push(message),
    warn: () => undefined,
    error: () => undefined,
  };
  const relay = createRelay({ db, producerFactory: () => transport.producer(), logger, pollIntervalMs: 20 });
  t.after(() => relay.close());
  assert.equal(relay.isRunning(), false);
  await relay.start();
  assert.equal(relay.isRunning(), true);
  assert.deepEqual(infos, ['relay started']);
  await db.transaction((tx) =>
    createOutbox().enqueue(
      tx,
      [1, 2, 3].map((n) => createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } })),
    ),
  );
  await eventually(async () => relay.stats().published === 3, 20_000, 'three published');
  const stats = relay.stats();
  assert.deepEqual([stats.running, stats.refused, stats.failingPasses, stats.lastError], [true, 0, 0, null]);
  assert.ok(stats.lastPublishedAt instanceof Date);
  await relay.close();
  assert.equal(relay.isRunning(), false);
});
