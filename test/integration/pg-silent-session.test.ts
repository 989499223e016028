// A relay whose PostgreSQL connection goes silent in the middle of a pass (after the broker acknowledged, before the
// delete) leaves its session "idle in transaction" on the server, holding every shard's advisory lock. With pgDb's
// timeouts the server ends that session within the bound, a second relay takes the shards and publishes, and the
// frozen relay's own watchdog fails its pass instead of waiting for ever. The naive twin (the timeouts off, as pgDb
// was before): the second relay publishes nothing in the same window.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { defaultDatabaseUrl, type PgDbOptions, pgDb, pgPoolConfig } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const rows = 20;
const windowMs = 5_000;

function relayOn(db: Db, direct: Db, schema: string, extra: Partial<Parameters<typeof createRelay>[0]> = {}) {
  const transport = postgresTransport({ db: direct, schema, logger: silentLogger });
  return createRelay({
    db,
    schema,
    producer: transport.producer(),
    producerFactory: () => transport.producer(),
    listen: false,
    pollIntervalMs: 20,
    errorBackoffMs: 50,
    logger: silentLogger,
    ...extra,
  });
}

interface Frozen {
  /** What relay B published within the window, and how long it took. */
  published: number;
  elapsed: number;
  /** The messages of relay A's failed passes, so far. */
  failed: string[];
}

/** Relay A freezes (its connection silent) holding the shards, then relay B drains; `check` runs before cleanup. */
async function frozenRelay(t: TestContext, timeouts: PgDbOptions, check: (frozen: Frozen) => Promise<void>) {
  const { db: direct, schema } = await freshSchema(t);
  const url = new URL(defaultDatabaseUrl());
  const proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db = pgDb({ connectionString: url.toString(), max: 2, connectionTimeoutMs: 1000, ...timeouts });
  const failed: string[] = [];
  let froze!: () => void;
  const frozen = new Promise<void>((resolve) => {
    froze = resolve;
  });
  const relayA = relayOn(db, direct, schema, {
    logger: { ...silentLogger, error: (_message, fields) => failed.push(String(fields?.error)) },
    faults: (point) => {
      if (point !== 'relay:after-publish') return;
      proxy.silence(); // the delete that follows goes nowhere; the server waits for it, in the open transaction
      froze();
    },
  });
  const relayB = relayOn(direct, direct, schema);
  try {
    const events = Array.from({ length: rows }, (_, n) =>
      createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } }),
    );
    await direct.transaction((tx) => createOutbox({ schema }).enqueue(tx, events));
    await relayA.start();
    await frozen;
    const started = Date.now();
    const published = await relayB.drain(windowMs);
    await check({ published, elapsed: Date.now() - started, failed });
  } finally {
    // The twin's session holds the locks until its socket closes: cut it first, so nothing below waits on it.
    await proxy.close();
    await relayB.close();
    await relayA.close({ timeoutMs: 2000 });
    await db.close().catch(() => undefined);
  }
}

test('a relay frozen in its transaction loses its shards to the server timeout; another relay publishes', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const timeouts = { statementTimeoutMs: 1000, idleInTransactionTimeoutMs: 1000, queryTimeoutMs: 1500 };
  await frozenRelay(t, timeouts, async ({ published, elapsed, failed }) => {
    assert.equal(published, rows, `relay B published every row (in ${elapsed} ms)`);
    assert.ok(elapsed < windowMs, `within the window (${elapsed} ms)`);
    // The frozen relay recovers too: its watchdog fails the silent pass instead of waiting for ever.
    await eventually(async () => failed.length > 0, windowMs, 'relay A’s silent pass failed');
    assert.match(failed[0]!, /timeout/i, `failed by the watchdog: ${failed.join(' / ')}`);
  });
});

test('naive twin: with the timeouts off the frozen relay keeps every shard and waits for ever', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const off = { statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0, queryTimeoutMs: 0 };
  await frozenRelay(t, off, async ({ published, failed }) => {
    assert.equal(published, 0, 'relay B published nothing while the frozen session held the shards');
    assert.deepEqual(failed, [], 'relay A said nothing: its pass still waits, after the whole window');
  });
});

test('pgDb sessions carry the default timeouts; an option overrides them, 0 leaves the server setting', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const show = async (db: Db) => {
    try {
      const { rows } = await db.query<{ s: string; i: string }>(
        `SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i`,
      );
      return rows[0];
    } finally {
      await db.close();
    }
  };
  assert.deepEqual(await show(pgDb({ max: 1 })), { s: '1min', i: '1min' });
  assert.deepEqual(await show(pgDb({ max: 1, statementTimeoutMs: 2500, idleInTransactionTimeoutMs: 0 })), {
    s: '2500ms',
    i: '0',
  });
  // A long migration from the CLI: the connection string lifts the statement timeout, and the client watchdog with it.
  const url = new URL(defaultDatabaseUrl());
  url.searchParams.set('statement_timeout', '0');
  assert.deepEqual(await show(pgDb({ connectionString: url.toString(), max: 1 })), { s: '0', i: '1min' });
  assert.equal(pgPoolConfig({ connectionString: url.toString() }).query_timeout, undefined, 'no watchdog');
  assert.equal(pgPoolConfig({}).query_timeout, 90_000, 'the watchdog outlasts the statement timeout');
});

test('a transaction the server ended for idling fails with the server’s reason (25P03), not a bare "not queryable"', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const db = pgDb({ max: 1, idleInTransactionTimeoutMs: 200 });
  const watcher = pgDb({ max: 1 });
  t.after(async () => {
    await db.close();
    await watcher.close();
  });
  const gone = async (pid: number) =>
    (await watcher.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0;
  await assert.rejects(
    db.transaction(async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // idle in the transaction until the server has ended the session (an event, not a fixed sleep)
      await eventually(() => gone(rows[0]!.pid), 10_000, 'the server ended the session');
      await tx.query('SELECT 2');
    }),
    { code: '25P03', message: /idle-in-transaction timeout/ },
  );
  assert.deepEqual((await db.query<{ n: number }>('SELECT 3 AS n')).rows, [{ n: 3 }], 'the pool goes on');
});
