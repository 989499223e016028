// A PostgreSQL connection that goes silent mid-transaction (a dead network path: nothing closed, nothing answered)
// must not hold its locks for ever. pgDb sets idle_in_transaction_session_timeout (the server ends the session and
// releases the relay's shard locks) and a query timeout (the client stops waiting). Real PostgreSQL through a TCP
// proxy that drops every byte.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultDatabaseUrl, type PgDbOptions, pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

const lockKey = Math.floor(Math.random() * 1e9);

/** A transaction takes an advisory lock, its connection goes silent; when can another session take the lock? */
async function silentHolder(t: import('node:test').TestContext, limits: PgDbOptions) {
  const url = new URL(defaultDatabaseUrl());
  const proxy = await tcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const proxied = pgDb({ connectionString: url.toString(), max: 1, ...limits });
  const direct = pgDb({ max: 1 });
  t.after(async () => {
    await proxy.close().catch(() => undefined);
    await direct.close();
  });
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const pass = proxied.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
    locked();
    proxy.silence();
    await tx.query('SELECT 1');
  });
  pass.catch(() => undefined);
  await holding;
  const free = async () =>
    (await direct.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [lockKey])).rows[0]?.ok === true;
  return { pass, free, direct };
}

test('a silent connection: the server ends the session, the lock is free again, the waiting pass fails', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { pass, free, direct } = await silentHolder(t, { idleInTransactionMs: 1_000, queryTimeoutMs: 2_000 });
  await eventually(free, 20_000, 'the advisory lock free again');
  await direct.query('SELECT pg_advisory_unlock($1)', [lockKey]);
  await assert.rejects(pass);
});

test('naive twin: without the limits the silent session keeps the lock (checked past twice the limits above)', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { free } = await silentHolder(t, { idleInTransactionMs: 0, queryTimeoutMs: 0 });
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    assert.equal(await free(), false, 'the lock is still held');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // End the abandoned session, so nothing outlives the test.
  const admin = pgDb({ max: 1 });
  await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND pid <> pg_backend_pid()`,
    [lockKey],
  );
  await admin.close();
});

/** A relay whose database goes silent in its pass: what it logs as a warning within 5 s. */
async function relayWarnings(t: import('node:test').TestContext, passWarnMs: number) {
  const { schema } = await freshSchema(t);
  const url = new URL(defaultDatabaseUrl());
  const proxy = await tcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db = pgDb({ connectionString: url.toString(), max: 2, idleInTransactionMs: 0, queryTimeoutMs: 0 });
  const warnings: string[] = [];
  const relay = createRelay({
    db,
    schema,
    listen: false,
    passWarnMs,
    producerFactory: () => postgresTransport({ db, schema }).producer(),
    logger: { ...silentLogger, warn: (message) => void warnings.push(message) },
  });
  t.after(async () => {
    await relay.close({ timeoutMs: 100 });
    await proxy.close().catch(() => undefined);
  });
  await relay.start();
  proxy.silence();
  const until = Date.now() + 5_000;
  while (Date.now() < until && !warnings.includes('relay pass still running')) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return warnings;
}

test('relay watchdog: a pass stuck on a silent connection is logged as still running', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.ok((await relayWarnings(t, 300)).includes('relay pass still running'));
});

test('naive twin: with the watchdog out of reach the stuck pass says nothing', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.ok(!(await relayWarnings(t, 2 ** 31 - 1)).includes('relay pass still running'));
});
