// changeShards racing a writer at REPEATABLE READ or SERIALIZABLE: the writer's snapshot predates the change, so a
// plain read of the stored count lets its rows in under the old count, in shards the running relays never take. The
// enqueue reads the count FOR SHARE at those levels: the writer fails with a serialization failure (40001), and its
// retry is refused with EFF_INVALID_OPTIONS. The naive twin runs the same statement without FOR SHARE.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { pgDb } from '../../src/db/pg.ts';
import type { Db, Queryable } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { shardOf } from '../../src/outbox/shard.ts';
import { changeShards } from '../../src/outbox/shards-setting.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { signal } from '../support/gates.ts';
import { needs } from '../support/services.ts';

const keys = Array.from({ length: 20 }, (_, n) => `k${n}`);

interface Race {
  isolation: string;
  /**
   * `queued`: changeShards from 16 to 8 starts and waits (a third session holds the outbox), the writer's enqueue
   * queues behind it, then the third session lets go. `after`: changeShards commits, then `between` runs, then the
   * writer enqueues. Either way the writer's snapshot predates the change.
   */
  mode: 'queued' | 'after';
  enqueue: (tx: Queryable) => Promise<void>;
  between?: () => Promise<void>;
}

/** Returns the writer's failure (undefined: it committed). */
async function race(db: Db, schema: string, { isolation, mode, enqueue, between }: Race) {
  await changeShards(db, { schema, shards: 16 });
  const sessions = pgDb({ max: 4 });
  const waiting = async (n: number) => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '${schema}.outbox'::regclass`,
    );
    return rows[0]?.n === n;
  };
  try {
    const held = signal(); // the third session's hold, let go by `held.fire()`
    const holds = signal();
    const holder = sessions.transaction(async (tx) => {
      if (mode === 'queued') await tx.query(`LOCK TABLE ${schema}.outbox IN ROW EXCLUSIVE MODE`);
      holds.fire();
      await held.fired;
    });
    await holds.fired;
    const snapshotTaken = signal();
    const proceed = signal();
    const writer = sessions.transaction(async (tx) => {
      await tx.query(`SET TRANSACTION ISOLATION LEVEL ${isolation}`);
      await tx.query(`SELECT count(*) FROM ${schema}.settings`); // the transaction's snapshot, from here on
      snapshotTaken.fire();
      await proceed.fired;
      await enqueue(tx);
    });
    writer.catch(() => undefined);
    await snapshotTaken.fired;
    if (mode === 'queued') {
      const change = changeShards(sessions, { schema, shards: 8 });
      await eventually(() => waiting(1), 10_000, 'changeShards waits for the outbox');
      proceed.fire();
      await eventually(() => waiting(2), 10_000, 'the writer queues behind changeShards');
      held.fire();
      await change;
    } else {
      held.fire();
      await changeShards(sessions, { schema, shards: 8 });
      await between?.();
      proceed.fire();
    }
    await holder;
    return await writer.then(
      () => undefined,
      (error: unknown) => error as { code?: string },
    );
  } finally {
    await sessions.close();
  }
}

const events = () => keys.map((key, n) => createEvent({ topic: 'orders', type: 'x', source: '/t', key, data: { n } }));
const outboxRows = async (db: Db, schema: string) =>
  Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);

const cases = [
  { isolation: 'REPEATABLE READ', mode: 'queued' },
  { isolation: 'REPEATABLE READ', mode: 'after' },
  { isolation: 'SERIALIZABLE', mode: 'queued' },
] as const;
for (const { isolation, mode } of cases) {
  test(`a ${isolation} writer racing changeShards (${mode}) fails with 40001; its retry is refused`, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { db, schema } = await freshSchema(t);
    const outbox = createOutbox({ schema, shards: 16 });
    const failure = await race(db, schema, { isolation, mode, enqueue: (tx) => outbox.enqueue(tx, events()) });
    assert.equal(failure?.code, '40001', `a serialization failure, not a row under the old count (${failure})`);
    assert.equal(await outboxRows(db, schema), 0, 'nothing written');
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query(`SET TRANSACTION ISOLATION LEVEL ${isolation}`);
        await outbox.enqueue(tx, events());
      }),
      { code: ErrorCodes.EFF_INVALID_OPTIONS, message: /`shards`: 16 differs from the 8/ },
      'the retry sees the new count',
    );
  });
}

test('naive twin: the same enqueue without FOR SHARE lets rows in under the old count; the relays skip them', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const shipped = loadSql(new URL('../../src/outbox/outbox.ts', import.meta.url).href, 'enqueue.sql', schema);
  const naive = shipped.replace(/^\s+FOR SHARE$/m, ''); // the clause, not the header's mention
  assert.notEqual(naive, shipped, 'the protection is switched off');
  const params = [
    keys.map(() => randomUUID()),
    keys.map(() => 'orders'),
    keys,
    keys.map((key) => shardOf(key, 16)),
    keys.map(() => '{}'),
    keys.map((key) => Buffer.from(key)),
    16,
  ];
  const transport = postgresTransport({ db, schema, logger: silentLogger });
  const relayOn8 = () =>
    createRelay({
      db,
      schema,
      shards: 8,
      producerFactory: () => transport.producer(),
      listen: false,
      pollIntervalMs: 20,
      logger: silentLogger,
    });
  const running = relayOn8();
  t.after(() => running.close());
  const failure = await race(db, schema, {
    isolation: 'REPEATABLE READ',
    mode: 'after',
    enqueue: async (tx) => {
      await tx.query(naive, params);
    },
    between: () => running.start(), // the deploy's relays on the new count, started while the outbox is empty
  });
  assert.equal(failure, undefined, 'the writer committed, under the old count');
  const beyond = keys.filter((key) => shardOf(key, 16) >= 8).length;
  assert.ok(beyond > 0, 'some keys are in shards 8..15 of the old count');
  await eventually(async () => (await outboxRows(db, schema)) === beyond, 10_000, 'the rows of shards 0..7 published');
  const { rows } = await db.query<{ low: number }>(`SELECT min(shard) AS low FROM ${schema}.outbox`);
  assert.ok(Number(rows[0]?.low) >= 8, 'the running relay skips every row beyond shard 7');
  const next = relayOn8();
  t.after(() => next.close());
  await assert.rejects(next.start(), { code: ErrorCodes.EFF_INVALID_OPTIONS }, 'and the next relay start is refused');
});
