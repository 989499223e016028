// The relay that reads the outbox from the write-ahead log (`source: 'wal'`), on a private cluster with logical
// decoding and the real broker: rows written before the slot existed and after, in commit order per key; crashes
// around the slot's confirmation, each with a naive twin that the same fault breaks.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { checkWalSlot } from '../../src/cli/doctor/wal-slot.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { discardRefused, listRefused } from '../../src/outbox/refused.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { dropWalSlot, walNames } from '../../src/outbox/wal/slot.ts';
import { eventually, freshSchema, freshTopic, outboxCount } from '../support/fixtures.ts';
import { readTopic, readUntilMarker } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';
import { slotReady, walClusterPerFile } from '../support/wal-cluster.ts';
import {
  enqueueNumbered,
  heldProducer,
  numbers,
  runWalChild,
  startedWalRelay,
  walRelay,
} from '../support/wal-relay.ts';

const cluster = walClusterPerFile();

test('rows written before the slot existed and after it: all published, each key in commit order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  await enqueueNumbered(db, schema, topic, 0, 300);
  const relay = walRelay(cluster(), db, schema, transport);
  t.after(() => relay.close());
  await relay.start();
  for (let n = 300; n < 1000; n += 100) await enqueueNumbered(db, schema, topic, n, 100);
  await eventually(async () => (await outboxCount(db, schema)) === 0, 30_000, 'the outbox emptied');
  const records = await readTopic(transport, topic, 1000);
  const seen = numbers(records);
  assert.equal(new Set(seen).size, 1000);
  for (let key = 0; key < 4; key++) {
    const ofKey = records.filter((r) => String(r.key) === `k${key}`).map((r) => numbers([r])[0]!);
    assert.deepEqual(
      ofKey,
      [...ofKey].sort((a, b) => a - b),
      `key k${key} in commit order`,
    );
  }
  await eventually(async () => relay.stats().wal?.confirmedLsn !== null, 10_000, 'a confirmed position');
  assert.equal((await checkWalSlot(db, schema)).level, 'ok');
  await relay.close();
  // The doctor: a slot no relay streams from that holds WAL (over a threshold of 0 bytes here) is a warning. The
  // server's walsender lets the slot go a moment after the relay closed (a CI run looked at once and got 'ok'), and a
  // write after it makes sure the slot holds WAL: the warning is awaited, within a bound.
  await enqueueNumbered(db, schema, topic, 1000, 1);
  let abandoned = await checkWalSlot(db, schema, 0);
  await eventually(
    async () => {
      abandoned = await checkWalSlot(db, schema, 0);
      return abandoned.level === 'warn';
    },
    15_000,
    'the doctor to warn of the slot no relay streams from',
  );
  assert.match(abandoned.what, /no relay streaming and holds/);
  assert.match(String(abandoned.fix), /max_slot_wal_keep_size/);
});

/**
 * The slot exists first (so the events come through the stream, not the table's catch-up); then `txs` transactions
 * of `perTx` events are written, and a relay process killed after its first acknowledged batch; a new relay finishes.
 */
async function killAfterFirstPublish(t: TestContext, naive: boolean, txs: number, perTx: number, batch: number) {
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  const first = walRelay(cluster(), db, schema, transport);
  await first.start();
  await slotReady(db, schema);
  await first.close();
  for (let i = 0; i < txs; i++) await enqueueNumbered(db, schema, topic, i * perTx, perTx);
  const said = await runWalChild(cluster(), {
    WAL_SCHEMA: schema,
    WAL_CRASH_AT: '1',
    WAL_BATCH: String(batch),
    WAL_NAIVE: naive ? '1' : '0',
  });
  assert.match(said, /crash/, 'the relay process was killed at its crash point');
  const relay = walRelay(cluster(), db, schema, transport);
  t.after(() => relay.close());
  await relay.start();
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  return { distinct: new Set(numbers(records)).size, records: records.length, db, schema };
}

test('a relay killed after the broker acknowledged a batch, before the slot was told: the rest streams again', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killAfterFirstPublish(t, false, 10, 200, 200);
  assert.equal(run.distinct, 2000, 'every event published');
  assert.ok(run.records >= 2000);
  await eventually(async () => (await outboxCount(run.db, run.schema)) === 0, 10_000, 'the outbox emptied');
});

test('naive twin (confirms each transaction on receipt) under the same kill loses what it had received', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killAfterFirstPublish(t, true, 10, 200, 200);
  assert.ok(run.distinct < 2000, `events lost: only ${run.distinct} of 2000 published`);
});

test('a relay killed in the middle of one transaction of 3,000 events: the whole transaction streams again', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killAfterFirstPublish(t, false, 1, 3000, 500);
  assert.equal(run.distinct, 3000, 'every event of the transaction published');
});

test('naive twin (confirms on receipt) killed in the middle of that transaction loses its rest', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killAfterFirstPublish(t, true, 1, 3000, 500);
  assert.ok(run.distinct <= 500, `the rest of the transaction lost: ${run.distinct} of 3000 published`);
});

async function restartMidStream(t: TestContext, naive: boolean) {
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  // Each send delayed: transactions pile up received and not yet published.
  const relay = await startedWalRelay(t, cluster(), db, schema, transport, {
    producerFactory: heldProducer(transport, () => sleep(150)),
    batchSize: 100,
    ...(naive ? { unsafe: 'resume-from-received' as const } : {}),
  });
  for (let i = 0; i < 20; i++) await enqueueNumbered(db, schema, topic, i * 100, 100);
  await eventually(async () => relay.stats().published >= 300, 20_000, '300 published');
  await cluster().sh('restart');
  await eventually(async () => relay.stats().failingPasses === 0 && relay.stats().wal?.standby === false, 20_000);
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  return { distinct: new Set(numbers(records)).size, db, schema };
}

test('PostgreSQL restarted while transactions wait to be published: the relay streams them again', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await restartMidStream(t, false);
  assert.equal(run.distinct, 2000, 'every event published');
  await eventually(async () => (await outboxCount(run.db, run.schema)) === 0, 10_000, 'the outbox emptied');
});

test('naive twin (streams again from the last transaction received) under the same restart loses what it held', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await restartMidStream(t, true);
  assert.ok(run.distinct < 2000, `events lost: only ${run.distinct} of 2000 published`);
});

test('two relays started at once on one slot: one streams, the other stands by and takes over; each event once', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  await enqueueNumbered(db, schema, topic, 0, 500);
  const relays = [walRelay(cluster(), db, schema, transport), walRelay(cluster(), db, schema, transport)];
  t.after(() => Promise.all(relays.map((relay) => relay.close())));
  await Promise.all(relays.map((relay) => relay.start()));
  await eventually(async () => (await outboxCount(db, schema)) === 0, 10_000, 'the first 500 published');
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  assert.equal((await readUntilMarker(transport, topic)).length, 500, 'the rows of the table published once');
  await eventually(async () => relays.some((relay) => relay.stats().wal?.standby), 10_000, 'one standing by');
  const [active, standby] = relays[0]!.stats().wal?.standby ? [relays[1]!, relays[0]!] : [relays[0]!, relays[1]!];
  await active.close();
  await eventually(async () => standby.stats().wal?.standby === false, 10_000, 'the other taking over');
  await enqueueNumbered(db, schema, topic, 500, 500);
  await enqueueNumbered(db, schema, topic, -2, 1, 1, 'marker');
  await eventually(async () => (await outboxCount(db, schema)) === 0, 10_000, 'the next 500 published');
  const records = await readUntilMarker(transport, topic);
  assert.equal(new Set(numbers(records)).size, 1000, 'every event published');
  assert.equal(records.length, 1000, 'each once');
});

test('naive twin (two relays, a slot each: what runs without the one-slot rule) publishes every event twice', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  const own = (slot: string) => walRelay(cluster(), db, schema, transport, { wal: { slot } });
  const one = own(`${schema}_a`);
  const two = own(`${schema}_b`);
  t.after(async () => {
    await Promise.all([one.close(), two.close()]);
    for (const slot of ['a', 'b']) await dropWalSlot(db, { schema, slot: `${schema}_${slot}` });
  });
  await Promise.all([one.start(), two.start()]);
  await eventually(
    async () => (await db.query(`SELECT 1 FROM ${schema}.settings WHERE name LIKE 'wal.slot.%'`)).rows.length === 2,
    20_000,
  );
  await enqueueNumbered(db, schema, topic, 0, 500);
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  await eventually(async () => one.stats().published + two.stats().published >= 1002, 20_000, 'both published');
  const records = await readUntilMarker(transport, topic);
  assert.equal(new Set(numbers(records)).size, 500);
  assert.equal(records.length, 1000, 'every event twice');
});

test('a slot PostgreSQL invalidated: a coded error, loud, and after the slot is dropped every row is published', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  const { slot, publication } = walNames(schema);
  const errors: Record<string, unknown>[] = [];
  const logger = { ...silentLogger, error: (_: string, fields?: Record<string, unknown>) => errors.push(fields ?? {}) };
  const first = walRelay(cluster(), db, schema, transport);
  await first.start();
  await slotReady(db, schema);
  await first.close();
  await enqueueNumbered(db, schema, topic, 0, 500);
  // WAL written past max_slot_wal_keep_size while the relay is away: the checkpoint invalidates the slot.
  await db.query("ALTER SYSTEM SET max_slot_wal_keep_size = '32MB'");
  await db.query('SELECT pg_reload_conf()');
  t.after(async () => {
    await db.query('ALTER SYSTEM RESET max_slot_wal_keep_size');
    await db.query('SELECT pg_reload_conf()');
  });
  await db.query(
    `CREATE TABLE ${schema}.junk AS SELECT repeat(md5(n::text), 60) AS x FROM generate_series(1, 40000) n`,
  );
  for (let i = 0; i < 3; i++) await db.query('SELECT pg_switch_wal()').then(() => db.query('CHECKPOINT'));
  const state = await db.query<{ wal_status: string }>(
    'SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1',
    [slot],
  );
  assert.equal(state.rows[0]?.wal_status, 'lost', 'the slot was invalidated');
  assert.equal((await checkWalSlot(db, schema)).level, 'fail', 'the doctor says so');
  // The WAL alone no longer holds these events (what a reader of pg_logical_emit_message would have had).
  await assert.rejects(
    db.query(
      "SELECT * FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2)",
      [slot, publication],
    ),
  );
  const relay = walRelay(cluster(), db, schema, transport, { logger });
  t.after(() => relay.close());
  await relay.start();
  await eventually(async () => errors.some((e) => e.code === 'EFF_WAL_SLOT_INVALIDATED'), 10_000, 'the coded error');
  assert.match(String(errors.find((e) => e.code === 'EFF_WAL_SLOT_INVALIDATED')?.error), /drop the slot/);
  assert.equal(relay.stats().published, 0);
  await dropWalSlot(db, { schema });
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  assert.equal(new Set(numbers(records)).size, 500, 'every row still in the table published');
});

test('a server without logical decoding: EFF_WAL_UNAVAILABLE saying what is missing; the poller only when asked', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  // The machine's shared server runs with wal_level = replica (and is never reconfigured).
  const { db, schema } = await freshSchema(t);
  const level = (await db.query<{ wal_level: string }>('SHOW wal_level')).rows[0]?.wal_level;
  if (level === 'logical') return t.skip('the shared server has logical decoding');
  const { transport, topic } = await freshTopic(t, 3);
  const plain = createRelay({
    db,
    schema,
    source: 'wal',
    producerFactory: () => transport.producer(),
    logger: silentLogger,
  });
  await assert.rejects(plain.start(), (error: { code?: string; message: string }) => {
    assert.equal(error.code, 'EFF_WAL_UNAVAILABLE');
    assert.match(error.message, new RegExp(`wal_level is ${level}, not logical`));
    return true;
  });
  await plain.close();
  const warnings: string[] = [];
  const relay = createRelay({
    db,
    schema,
    source: 'wal',
    wal: { fallback: 'poll' },
    producerFactory: () => transport.producer(),
    logger: { ...silentLogger, warn: (message: string) => warnings.push(message) },
  });
  t.after(() => relay.close());
  await relay.start();
  assert.match(warnings.join('\n'), /running the poller \(fallback: poll\)/);
  await enqueueNumbered(db, schema, topic, 0, 10);
  await eventually(async () => (await outboxCount(db, schema)) === 0, 10_000, 'published by the poller');
  assert.equal(relay.stats().published, 10);
});

test('a row the broker refuses: set aside, its key held in the table; discarded, the held rows stream again in order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster().schema();
  const topic = await smallTopic(t, { maxMessageBytes: 4000, partitions: 3 });
  const { transport } = await freshTopic(t, 1);
  const relay = await startedWalRelay(t, cluster(), db, schema, transport);
  const outbox = createOutbox({ schema });
  const event = (key: string, n: number, bytes = 10) =>
    createEvent({ topic, type: 't', source: '/wal', key, data: { n, pad: 'x'.repeat(bytes) } });
  await db.transaction((tx) =>
    outbox.enqueue(tx, [event('a', 1), event('b', 2), event('a', 3, 20_000), event('a', 4), event('b', 5)]),
  );
  await eventually(async () => (await listRefused(db, { schema })).length === 1, 20_000, 'the big row set aside');
  await eventually(async () => relay.stats().published === 3, 10_000, 'the other rows published');
  assert.equal(await outboxCount(db, schema), 1, 'the row behind the refused one waits in the table');
  assert.equal(await discardRefused(db, { schema }), 1);
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  const ofA = records.filter((r) => String(r.key) === 'a').map((r) => numbers([r])[0]);
  assert.deepEqual(ofA, [1, 4], 'key a: 1, then 4 once 3 was discarded');
  assert.equal(await outboxCount(db, schema), 0);
});
