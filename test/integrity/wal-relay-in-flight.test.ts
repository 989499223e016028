// The WAL relay sends a batch while earlier ones wait for the broker, but never beside a send that holds one of its
// keys: a row the broker refuses there is set aside and holds its key's later rows back. Private cluster with logical
// decoding, real broker; the naive twin sends beside the key in flight and puts the later row on the topic first.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createEvent } from '../../src/envelope/event.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { listRefused } from '../../src/outbox/refused.ts';
import type { WalOptions } from '../../src/outbox/relay-options.ts';
import { eventually, freshTopic } from '../support/fixtures.ts';
import { signal } from '../support/gates.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';
import { walClusterPerFile } from '../support/wal-cluster.ts';
import { heldProducer, startedWalRelay } from '../support/wal-relay.ts';

const cluster = walClusterPerFile();

/**
 * Key `a`'s first row is too big for the topic (the broker refuses it); its send is held 2 s while a second
 * transaction writes `a`'s next row. Returns the keys on the topic once a marker written after both was published.
 */
async function laterRowBesideRefusal(t: TestContext, unsafe?: WalOptions['unsafe']): Promise<string[]> {
  const { db, schema } = await cluster().schema();
  const topic = await smallTopic(t, { maxMessageBytes: 4000 });
  const { transport } = await freshTopic(t, 1);
  const bigSend = signal();
  const relay = await startedWalRelay(t, cluster(), db, schema, transport, {
    ...(unsafe ? { unsafe } : {}),
    producerFactory: heldProducer(transport, async (records) => {
      if (!records.some((record) => (record.value?.length ?? 0) > 10_000)) return;
      bigSend.fire();
      await sleep(2000);
    }),
  });
  const outbox = createOutbox({ schema });
  const event = (key: string, n: number, bytes = 10) =>
    createEvent({ topic, type: 't', source: '/wal', key, data: { n, pad: 'x'.repeat(bytes) } });
  await db.transaction((tx) => outbox.enqueue(tx, [event('a', 1, 20_000)]));
  await bigSend.fired;
  await db.transaction((tx) => outbox.enqueue(tx, [event('a', 2)]));
  await eventually(async () => (await listRefused(db, { schema })).length === 1, 20_000, 'the big row set aside');
  await db.transaction((tx) => outbox.enqueue(tx, [event('marker', 3)]));
  await eventually(
    async () => (await db.query(`SELECT 1 FROM ${schema}.outbox WHERE key = 'marker'`)).rows.length === 0,
    20_000,
    'the marker published',
  );
  const records = await readTopic(transport, topic, relay.stats().published);
  return records.map((record) => String(record.key));
}

test('a row of a key whose send is in flight waits for it: the refused row holds it back in the table', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const keys = await laterRowBesideRefusal(t);
  assert.deepEqual(keys, ['marker'], "key a's second row stays behind its refused first row");
});

test('naive twin (sends beside the key in flight) publishes the later row while the earlier one is set aside', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const keys = await laterRowBesideRefusal(t, 'send-beside-key-in-flight');
  assert.deepEqual(keys, ['a', 'marker'], "the naive relay put key a's second row on the topic ahead of its first");
});
