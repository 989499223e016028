// The relay's watchdog: a pass that hangs (here on a PostgreSQL connection gone silent, with every pgDb limit off) is
// logged as still running, at each passWarnMs, instead of hanging without a word. Real PostgreSQL through a TCP proxy
// that forwards nothing once silenced.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** A relay whose database goes silent in its pass: what it logs as a warning within 5 s. */
async function relayWarnings(t: import('node:test').TestContext, passWarnMs: number) {
  const { schema } = await freshSchema(t);
  const url = new URL(defaultDatabaseUrl());
  const proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db = pgDb({
    connectionString: url.toString(),
    max: 2,
    idleInTransactionTimeoutMs: 0,
    statementTimeoutMs: 0,
    queryTimeoutMs: 0,
  });
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
