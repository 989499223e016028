// A relay.start() that failed (the database down at start) can be called again on the same relay once the database
// is back; before, the rejected start was kept and every later start() failed with the first error. Real PostgreSQL
// through a TCP proxy that refuses connections while down, real broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { eventually, freshSchema, freshTopic } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('relay.start() fails while the database is down, and succeeds when called again once it is back', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db: direct, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  await direct.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, [createEvent({ topic, type: 'x', source: '/t', key: 'k', data: {} })]),
  );
  const url = new URL(defaultDatabaseUrl());
  const proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db = pgDb({ connectionString: url.toString(), max: 2 });
  const relay = createRelay({ db, schema, producerFactory: () => transport.producer(), logger: silentLogger });
  t.after(async () => {
    await relay.close();
    await db.close().catch(() => undefined);
    await proxy.close().catch(() => undefined);
  });
  // Down for 3 s: a refused connection fails the start at once.
  const back = proxy.restart(3_000);
  await assert.rejects(relay.start());
  await back;
  await relay.start();
  const left = async () =>
    Number((await direct.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
  await eventually(async () => (await left()) === 0, 20_000, 'the row published');
});
