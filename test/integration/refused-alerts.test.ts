// Refused outbox rows reach the alerts and the metrics snapshot from the database (issue 37, from reading). A relay's
// onRefused is called after its commit, in its own process: a relay that dies between the two, or whose COMMIT's answer
// is lost, never calls it, and its successor has nothing to report. The alerts and `outbox_refused` count the rows set
// aside (`outbox_refused`) whatever happened to the callback. Real PostgreSQL; the row is set aside by the relay's own
// statement, committed, with no relay left to report it (a relay killed right after its commit).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backpressureMetrics } from '../../src/backpressure/metrics.ts';
import type { Db } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';
import { createDeadLetterAlerts, type DeadLetterAlert } from '../../src/deadletter/alerts.ts';
import { createSender } from '../../src/effects/sender.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay, type RefusedEvent } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const refuseSql = (schema: string) =>
  loadSql(new URL('../../src/outbox/relay.ts', import.meta.url).href, 'relay-refuse.sql', schema);

/** Two rows of one key; the first set aside as a relay does it, committed, and nobody told. */
async function setAside(db: Db, schema: string): Promise<void> {
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(
      tx,
      [0, 1].map((n) => createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n } })),
    ),
  );
  await refuseOldest(db, schema);
}

async function refuseOldest(db: Db, schema: string): Promise<void> {
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ seq: string }>(`SELECT min(seq)::text AS seq FROM ${schema}.outbox`);
    await tx.query(refuseSql(schema), [rows[0]!.seq, 'ERR_MSG_SIZE_TOO_LARGE', 'too large for the topic']);
  });
}

test('alerts and metrics see a refused row whose relay never reported it', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await setAside(db, schema);
  const alerts: DeadLetterAlert[] = [];
  const watcher = createDeadLetterAlerts({
    db,
    schema,
    everyMs: 30,
    logger: silentLogger,
    onAlert: (a) => alerts.push(a),
  });
  t.after(() => watcher.close());
  await watcher.start();
  await eventually(async () => alerts.length > 0, 10_000, 'an alert');
  await new Promise((resolve) => setTimeout(resolve, 300)); // ten checks more: no repeat
  assert.deepEqual(
    alerts.map((a) => [a.kind, a.subject, a.dead, a.added]),
    [['non-empty', 'refused outbox rows', 1, 1]],
  );
  assert.equal(watcher.refused, 1);
  assert.equal(watcher.dead, 0);
  await refuseOldest(db, schema); // the key's second row, refused too
  await eventually(async () => alerts.length > 1, 10_000, 'a second alert');
  assert.deepEqual(
    alerts.slice(1).map((a) => [a.kind, a.subject, a.dead, a.added]),
    [['growing', 'refused outbox rows', 2, 1]],
  );
  const sender = createSender({ db, schema, provider: async () => ({}), logger: silentLogger });
  const metrics = backpressureMetrics({ sender, refused: { db, schema } });
  t.after(() => metrics.close());
  assert.equal((await metrics.metrics()).outbox_refused, 2);
});

test('naive twin: the callback alone; the next relay tells nothing of the row set aside before it', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  await setAside(db, schema);
  const told: RefusedEvent[] = [];
  const relay = createRelay({
    db,
    schema,
    producerFactory: () => transport.producer(),
    logger: silentLogger,
    onRefused: (refused) => told.push(refused),
  });
  t.after(() => relay.close());
  assert.equal(await relay.drain(2_000), 0); // the key's later row waits behind the refused one
  assert.equal(told.length, 0);
  assert.equal(relay.stats().refused, 0);
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox_refused`);
  assert.equal(rows[0]?.n, 1);
});
