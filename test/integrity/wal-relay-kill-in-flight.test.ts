// The WAL relay SIGKILLed with several batches in flight. A relay child streams 16 transactions of 50 events, one
// batch each, keys `g<i % 4>-*`: 4 batches go out at once (the 5th shares keys with the 1st and waits for it); each
// send is held before it goes to the broker (0.6..1.5 s, then 0.3, 0.9, 1.2, 1.5 s: gaps a loaded machine keeps), and
// the child kills itself when the 5th batch's settle starts, 3 sends still waiting for the broker and 4 transactions
// confirmed. Then: the slot's confirmed position passes no transaction with a row not on the topic at the kill; after
// a restart every event is on the topic, and each key's events first appear in commit order. Private cluster with
// logical decoding, real broker. Naive twins under the same kill: confirming each transaction on receipt (the slot
// passes unsent rows, which are lost), and sending beside a key in flight (the 5th batch, held 0.3 s, is written
// before the 1st, held 0.6 s).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import type { WalOptions } from '../../src/outbox/relay-options.ts';
import { walNames } from '../../src/outbox/wal/slot.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { freshTopic } from '../support/fixtures.ts';
import { readToEnd, readUntilMarker } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { walClusterPerFile } from '../support/wal-cluster.ts';
import { enqueueNumbered, numbers, runWalChild, startedWalRelay } from '../support/wal-relay.ts';

const cluster = walClusterPerFile();

const txs = 16;
const groups = 4;
const perTx = 50;
const lsn = (text: string) => {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

/**
 * Transaction i: events n = 50 i .. 50 i + 49, keys `g<i % 4>-<n % 2>`. Returns, per transaction, the WAL position
 * just before its commit: the slot's confirmed position passes the transaction when it is above it.
 */
async function write(db: Db, schema: string, topic: string): Promise<bigint[]> {
  const outbox = createOutbox({ schema });
  const beforeCommit: bigint[] = [];
  for (let i = 0; i < txs; i++) {
    const events = Array.from({ length: perTx }, (_, j) =>
      createEvent({ topic, type: 't', source: '/wal', key: `g${i % groups}-${j % 2}`, data: { n: i * perTx + j } }),
    );
    const position = await db.transaction(async (tx) => {
      await outbox.enqueue(tx, events);
      return (await tx.query<{ at: string }>('SELECT pg_current_wal_insert_lsn()::text AS at')).rows[0]!.at;
    });
    beforeCommit.push(lsn(position));
  }
  return beforeCommit;
}

/** Keys whose events do not first appear in increasing order (a repeat of an event already seen is allowed). */
function outOfOrder(records: readonly IncomingRecord[]): string[] {
  const seen = new Map<string, { max: number; all: Set<number> }>();
  const broken = new Set<string>();
  for (const record of records) {
    const key = String(record.key);
    const [n] = numbers([record]) as [number];
    const ofKey = seen.get(key) ?? { max: -1, all: new Set<number>() };
    seen.set(key, ofKey);
    if (ofKey.all.has(n)) continue;
    if (n < ofKey.max) broken.add(key);
    ofKey.all.add(n);
    ofKey.max = Math.max(ofKey.max, n);
  }
  return [...broken];
}

async function killInFlight(t: TestContext, unsafe?: WalOptions['unsafe']) {
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 3);
  // The slot made first, so the events come through the stream, not the table's catch-up.
  await (await startedWalRelay(t, cluster(), db, schema, transport)).close();
  const beforeCommit = await write(db, schema, topic);
  const said = await runWalChild(cluster(), {
    WAL_SCHEMA: schema,
    WAL_CRASH_AT: '5',
    WAL_BATCH: String(perTx),
    WAL_SEND_DELAYS: '600,900,1200,1500,300,900,1200,1500',
    WAL_UNSAFE: unsafe ?? '',
  });
  const crash = /crash sends=(\d+) answered=(\d+)/.exec(said);
  assert.ok(crash, `the relay process was killed at its crash point: ${said}`);
  const { rows } = await db.query<{ at: string }>(
    'SELECT confirmed_flush_lsn::text AS at FROM pg_replication_slots WHERE slot_name = $1',
    [walNames(schema).slot],
  );
  const confirmed = lsn(rows[0]!.at);
  const onTopic = new Set(numbers(await readToEnd(transport, topic)));
  const passed = beforeCommit.flatMap((at, i) => (at < confirmed ? [i] : []));
  const passedUnsent = passed.filter((i) =>
    Array.from({ length: perTx }, (_, j) => i * perTx + j).some((n) => !onTopic.has(n)),
  );
  const relay = await startedWalRelay(t, cluster(), db, schema, transport);
  await enqueueNumbered(db, schema, topic, -1, 1, 1, 'marker');
  const records = await readUntilMarker(transport, topic);
  await relay.close();
  const all = new Set(numbers(records));
  return {
    inFlight: Number(crash[1]) - Number(crash[2]),
    confirmedTxs: passed.length,
    passedUnsent,
    missing: txs * perTx - Array.from({ length: txs * perTx }, (_, n) => n).filter((n) => all.has(n)).length,
    outOfOrder: outOfOrder(records),
  };
}

test('a relay killed with several batches in flight: the slot passes no unsent row, every event arrives in key order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killInFlight(t);
  assert.ok(run.inFlight >= 3, `sends waiting for the broker at the kill: ${run.inFlight}`);
  assert.ok(run.confirmedTxs >= 4, `transactions confirmed before the kill: ${run.confirmedTxs}`);
  assert.deepEqual(run.passedUnsent, [], 'confirmed transactions with a row not on the topic');
  assert.equal(run.missing, 0, 'events missing after the restart');
  assert.deepEqual(run.outOfOrder, [], 'keys out of commit order');
});

test('naive twin (confirms each transaction on receipt) under the same kill: the slot passed unsent rows, lost', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killInFlight(t, 'confirm-on-receipt');
  assert.ok(run.passedUnsent.length > 0, 'the slot confirmed transactions whose rows were not on the topic');
  assert.ok(run.missing > 0, `events lost: ${run.missing}`);
});

test("naive twin (sends beside a key in flight) under the same kill: a key's later events first appear ahead", async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const run = await killInFlight(t, 'send-beside-key-in-flight');
  assert.deepEqual(run.passedUnsent, []);
  assert.equal(run.missing, 0);
  assert.deepEqual(run.outOfOrder.sort(), ['g0-0', 'g0-1'], 'the 5th batch written ahead of the 1st');
});
