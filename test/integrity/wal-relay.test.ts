// The relay that reads the outbox from the write-ahead log (`source: 'wal'`), on a private cluster with logical
// decoding and the real broker: rows written before the slot existed and after, in commit order per key; crashes
// around the slot's confirmation, each with a naive twin that the same fault breaks.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkWalSlot } from '../../src/cli/doctor/wal-slot.ts';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { discardRefused, listRefused } from '../../src/outbox/refused.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { dropWalSlot, walNames } from '../../src/outbox/wal/slot.ts';
import type { IncomingRecord, OutgoingRecord, Producer, Transport } from '../../src/transport/port.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';
import { type WalCluster, walCluster } from '../support/wal-cluster.ts';

let cluster: WalCluster | undefined;
before(async () => {
  cluster = await walCluster();
});
after(async () => {
  await cluster?.close();
});

async function enqueue(db: Db, schema: string, topic: string, from: number, count: number, keys = 4, key?: string) {
  const outbox = createOutbox({ schema });
  await db.transaction((tx) =>
    outbox.enqueue(
      tx,
      Array.from({ length: count }, (_, i) =>
        createEvent({ topic, type: 't', source: '/wal', key: key ?? `k${(from + i) % keys}`, data: { n: from + i } }),
      ),
    ),
  );
}

const numbers = (records: { value: Buffer | null }[]) =>
  records.map((record) => (JSON.parse(record.value!.toString()) as { n: number }).n);

async function outboxRows(db: Db, schema: string): Promise<number> {
  return Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
}

function walRelay(db: Db, schema: string, transport: Transport, extra: Record<string, unknown> = {}) {
  return createRelay({
    db,
    schema,
    source: 'wal',
    wal: { connectionString: cluster!.url },
    producerFactory: () => transport.producer(),
    logger: silentLogger,
    errorBackoffMs: 200,
    ...extra,
  });
}

test('rows written before the slot existed and after it: all published, each key in commit order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  await enqueue(db, schema, topic, 0, 300);
  const relay = walRelay(db, schema, transport);
  t.after(() => relay.close());
  await relay.start();
  for (let n = 300; n < 1000; n += 100) await enqueue(db, schema, topic, n, 100);
  await eventually(async () => (await outboxRows(db, schema)) === 0, 30_000, 'the outbox emptied');
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
  // The doctor: a slot no relay streams from that holds WAL (over a threshold of 0 bytes here) is a warning.
  const abandoned = await checkWalSlot(db, schema, 0);
  assert.equal(abandoned.level, 'warn');
  assert.match(abandoned.what, /no relay streaming and holds/);
  assert.match(String(abandoned.fix), /max_slot_wal_keep_size/);
});

const child = fileURLToPath(new URL('./wal-relay.child.ts', import.meta.url));

/** Runs the relay child until it exits (it kills itself at its crash point); returns what it said. */
function runChild(env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, ['--import', 'tsx', child], {
      env: { ...process.env, WAL_URL: cluster!.url, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let said = '';
    process_.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    const timer = setTimeout(() => process_.kill('SIGKILL'), 30_000);
    process_.on('error', reject);
    process_.on('exit', () => {
      clearTimeout(timer);
      resolve(said);
    });
  });
}

/** Reads the topic from its start until a record with key `marker` arrived (the relay went past everything before). */
async function readUntilMarker(transport: Transport, topic: string): Promise<IncomingRecord[]> {
  const records: IncomingRecord[] = [];
  const consumer = transport.consumer({
    group: randomName('raw'),
    topics: [topic],
    maxBatchSize: 500,
    fromBeginning: true,
  });
  await consumer.run(async (batch, control) => {
    records.push(...batch.records);
    control.resolve(batch.records.at(-1)!.offset);
  });
  try {
    await eventually(async () => records.some((r) => String(r.key) === 'marker'), 30_000, `the marker on ${topic}`);
    // The marker may come before other partitions' earlier records: read each partition to its end.
    const admin = transport.admin();
    const ends = await admin.endOffsets(topic).finally(() => admin.close());
    const total = ends.reduce((sum, end) => sum + Number(end.offset), 0);
    await eventually(async () => records.length >= total, 30_000, `${total} records on ${topic}`);
  } finally {
    await consumer.close();
  }
  return records.filter((r) => String(r.key) !== 'marker');
}

async function slotReady(db: Db, schema: string): Promise<void> {
  await eventually(
    async () => (await db.query(`SELECT 1 FROM ${schema}.settings WHERE name LIKE 'wal.slot.%'`)).rows.length > 0,
    20_000,
    'the slot made',
  );
}

/**
 * The slot exists first (so the events come through the stream, not the table's catch-up); then `txs` transactions
 * of `perTx` events are written, and a relay process killed after its first acknowledged batch; a new relay finishes.
 */
async function killAfterFirstPublish(t: TestContext, naive: boolean, txs: number, perTx: number, batch: number) {
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  const first = walRelay(db, schema, transport);
  await first.start();
  await slotReady(db, schema);
  await first.close();
  for (let i = 0; i < txs; i++) await enqueue(db, schema, topic, i * perTx, perTx);
  const said = await runChild({
    WAL_SCHEMA: schema,
    WAL_CRASH_AT: '1',
    WAL_BATCH: String(batch),
    WAL_NAIVE: naive ? '1' : '0',
  });
  assert.match(said, /crash/, 'the relay process was killed at its crash point');
  const relay = walRelay(db, schema, transport);
  t.after(() => relay.close());
  await relay.start();
  await enqueue(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  return { distinct: new Set(numbers(records)).size, records: records.length, db, schema };
}

test('a relay killed after the broker acknowledged a batch, before the slot was told: the rest streams again', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killAfterFirstPublish(t, false, 10, 200, 200);
  assert.equal(run.distinct, 2000, 'every event published');
  assert.ok(run.records >= 2000);
  await eventually(async () => (await outboxRows(run.db, run.schema)) === 0, 10_000, 'the outbox emptied');
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

/** The transport's producer, each send delayed: transactions pile up received and not yet published. */
function slowProducer(transport: Transport, delayMs: number): Producer {
  const real = transport.producer();
  return {
    connect: () => real.connect(),
    close: () => real.close(),
    async send(records: readonly OutgoingRecord[]) {
      await sleep(delayMs);
      await real.send(records);
    },
  };
}

async function restartMidStream(t: TestContext, naive: boolean) {
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  const relay = walRelay(db, schema, transport, {
    producerFactory: () => slowProducer(transport, 150),
    batchSize: 100,
    wal: { connectionString: cluster!.url, ...(naive ? { unsafe: 'resume-from-received' as const } : {}) },
  });
  t.after(() => relay.close());
  await relay.start();
  await slotReady(db, schema);
  for (let i = 0; i < 20; i++) await enqueue(db, schema, topic, i * 100, 100);
  await eventually(async () => relay.stats().published >= 300, 20_000, '300 published');
  await cluster!.sh('restart');
  await eventually(async () => relay.stats().failingPasses === 0 && relay.stats().wal?.standby === false, 20_000);
  await enqueue(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  return { distinct: new Set(numbers(records)).size, db, schema };
}

test('PostgreSQL restarted while transactions wait to be published: the relay streams them again', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await restartMidStream(t, false);
  assert.equal(run.distinct, 2000, 'every event published');
  await eventually(async () => (await outboxRows(run.db, run.schema)) === 0, 10_000, 'the outbox emptied');
});

test('naive twin (streams again from the last transaction received) under the same restart loses what it held', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await restartMidStream(t, true);
  assert.ok(run.distinct < 2000, `events lost: only ${run.distinct} of 2000 published`);
});

test('two relays started at once on one slot: one streams, the other stands by and takes over; each event once', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  await enqueue(db, schema, topic, 0, 500);
  const relays = [walRelay(db, schema, transport), walRelay(db, schema, transport)];
  t.after(() => Promise.all(relays.map((relay) => relay.close())));
  await Promise.all(relays.map((relay) => relay.start()));
  await eventually(async () => (await outboxRows(db, schema)) === 0, 10_000, 'the first 500 published');
  await enqueue(db, schema, topic, -1, 1, 1, 'marker');
  assert.equal((await readUntilMarker(transport, topic)).length, 500, 'the rows of the table published once');
  await eventually(async () => relays.some((relay) => relay.stats().wal?.standby), 10_000, 'one standing by');
  const [active, standby] = relays[0]!.stats().wal?.standby ? [relays[1]!, relays[0]!] : [relays[0]!, relays[1]!];
  await active.close();
  await eventually(async () => standby.stats().wal?.standby === false, 10_000, 'the other taking over');
  await enqueue(db, schema, topic, 500, 500);
  await enqueue(db, schema, topic, -2, 1, 1, 'marker');
  await eventually(async () => (await outboxRows(db, schema)) === 0, 10_000, 'the next 500 published');
  const records = await readUntilMarker(transport, topic);
  assert.equal(new Set(numbers(records)).size, 1000, 'every event published');
  assert.equal(records.length, 1000, 'each once');
});

test('naive twin (two relays, a slot each: what runs without the one-slot rule) publishes every event twice', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  const own = (slot: string) => walRelay(db, schema, transport, { wal: { connectionString: cluster!.url, slot } });
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
  await enqueue(db, schema, topic, 0, 500);
  await enqueue(db, schema, topic, -1, 1, 1, 'marker');
  await eventually(async () => one.stats().published + two.stats().published >= 1002, 20_000, 'both published');
  const records = await readUntilMarker(transport, topic);
  assert.equal(new Set(numbers(records)).size, 500);
  assert.equal(records.length, 1000, 'every event twice');
});

test('a slot PostgreSQL invalidated: a coded error, loud, and after the slot is dropped every row is published', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  const { slot, publication } = walNames(schema);
  const errors: Record<string, unknown>[] = [];
  const logger = { ...silentLogger, error: (_: string, fields?: Record<string, unknown>) => errors.push(fields ?? {}) };
  const first = walRelay(db, schema, transport);
  await first.start();
  await slotReady(db, schema);
  await first.close();
  await enqueue(db, schema, topic, 0, 500);
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
  const relay = walRelay(db, schema, transport, { logger });
  t.after(() => relay.close());
  await relay.start();
  await eventually(async () => errors.some((e) => e.code === 'EFF_WAL_SLOT_INVALIDATED'), 10_000, 'the coded error');
  assert.match(String(errors.find((e) => e.code === 'EFF_WAL_SLOT_INVALIDATED')?.error), /drop the slot/);
  assert.equal(relay.stats().published, 0);
  await dropWalSlot(db, { schema });
  await enqueue(db, schema, topic, -1, 1, 1, 'marker');
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
  await enqueue(db, schema, topic, 0, 10);
  await eventually(async () => (await outboxRows(db, schema)) === 0, 10_000, 'published by the poller');
  assert.equal(relay.stats().published, 10);
});

test('a row the broker refuses: set aside, its key held in the table; discarded, the held rows stream again in order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster!.schema();
  const topic = await smallTopic(t, { maxMessageBytes: 4000, partitions: 3 });
  const { transport } = await freshTopic(t, 1);
  const relay = walRelay(db, schema, transport);
  t.after(() => relay.close());
  await relay.start();
  await slotReady(db, schema);
  const outbox = createOutbox({ schema });
  const event = (key: string, n: number, bytes = 10) =>
    createEvent({ topic, type: 't', source: '/wal', key, data: { n, pad: 'x'.repeat(bytes) } });
  await db.transaction((tx) =>
    outbox.enqueue(tx, [event('a', 1), event('b', 2), event('a', 3, 20_000), event('a', 4), event('b', 5)]),
  );
  await eventually(async () => (await listRefused(db, { schema })).length === 1, 20_000, 'the big row set aside');
  await eventually(async () => relay.stats().published === 3, 10_000, 'the other rows published');
  assert.equal(await outboxRows(db, schema), 1, 'the row behind the refused one waits in the table');
  assert.equal(await discardRefused(db, { schema }), 1);
  await enqueue(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  const ofA = records.filter((r) => String(r.key) === 'a').map((r) => numbers([r])[0]);
  assert.deepEqual(ofA, [1, 4], 'key a: 1, then 4 once 3 was discarded');
  assert.equal(await outboxRows(db, schema), 0);
});
