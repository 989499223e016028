// The outbox's shard count is stored in the schema at the first enqueue or relay start; a writer or relay with
// another count is refused with EFF_INVALID_OPTIONS instead of silently never publishing the higher shards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { changeShards } from '../../src/outbox/shards-setting.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const events = (count: number) =>
  Array.from({ length: count }, (_, n) =>
    createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } }),
  );

function relayOf(db: Db, schema: string, shards: number, onError?: (fields?: Record<string, unknown>) => void) {
  const transport = postgresTransport({ db, schema });
  return createRelay({
    db,
    schema,
    shards,
    producer: transport.producer(),
    producerFactory: () => transport.producer(),
    listen: false,
    pollIntervalMs: 20,
    errorBackoffMs: 50,
    logger: { ...silentLogger, error: (_message, fields) => onError?.(fields) },
  });
}

const invalidShards = { code: ErrorCodes.EFF_INVALID_OPTIONS, message: /`shards`: 8 differs from the 16/ };
const invalidCount = { code: ErrorCodes.EFF_INVALID_OPTIONS, message: /`shards`: 8 differs from the 1[0-9]/ };

test('a relay with fewer shards than the rows waiting in the outbox is refused with EFF_INVALID_OPTIONS', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await db.transaction((tx) => createOutbox({ schema, shards: 16 }).enqueue(tx, events(40)));
  // What a relay of 8 shards would never publish (the check-less relay left exactly these behind, for ever).
  const { rows: beyond } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox WHERE shard >= 8`);
  assert.ok(Number(beyond[0]?.n) > 0, 'rows wait in shards 8..15');
  const relay = relayOf(db, schema, 8);
  t.after(() => relay.close());
  await assert.rejects(relay.start(), invalidCount);
  await assert.rejects(relay.drain(1000), invalidCount);
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`);
  assert.equal(Number(rows[0]?.n), 40, 'nothing published by the misconfigured relay');
});

test('a writer whose shards differ from the relay that started first is refused, its transaction rolled back', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const relay = relayOf(db, schema, 16);
  t.after(() => relay.close());
  await relay.drain(1000);
  await assert.rejects(
    db.transaction((tx) => createOutbox({ schema, shards: 8 }).enqueue(tx, events(3))),
    invalidShards,
  );
  await db.transaction((tx) => createOutbox({ schema, shards: 16 }).enqueue(tx, events(3)));
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`);
  assert.equal(Number(rows[0]?.n), 3, 'only the matching writer wrote');
});

test('changeShards is refused while rows wait, and moves every writer and relay to the new count once drained', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await db.transaction((tx) => createOutbox({ schema, shards: 16 }).enqueue(tx, events(10)));
  await assert.rejects(changeShards(db, { schema, shards: 8 }), { code: ErrorCodes.EFF_INVALID_OPTIONS });
  const failures: unknown[] = [];
  const running = relayOf(db, schema, 16, (fields) => failures.push(fields?.code));
  t.after(() => running.close());
  await running.start();
  const waiting = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
  await eventually(async () => (await waiting()) === 0, 10_000, 'the 10 rows published');
  const old = relayOf(db, schema, 16);
  t.after(() => old.close());
  await changeShards(db, { schema, shards: 8 });
  // A relay still running on the old count stops publishing, loudly, at its next pass.
  await eventually(async () => failures.includes(ErrorCodes.EFF_INVALID_OPTIONS), 10_000, 'the running relay refused');
  await assert.rejects(
    db.transaction((tx) => createOutbox({ schema, shards: 16 }).enqueue(tx, events(1))),
    { code: ErrorCodes.EFF_INVALID_OPTIONS },
    'a writer still on the old count',
  );
  await db.transaction((tx) => createOutbox({ schema, shards: 8 }).enqueue(tx, events(10)));
  await assert.rejects(old.drain(1000), { code: ErrorCodes.EFF_INVALID_OPTIONS }, 'a relay still on the old count');
  const relay = relayOf(db, schema, 8);
  t.after(() => relay.close());
  assert.equal(await relay.drain(5000), 10);
});
