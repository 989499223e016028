// A send that fails (not a refusal: retried as it was) stops the WAL relay's later sends of its keys: the session
// streams again from the last confirmed position, and a row of the failed key sent meanwhile would be on the topic
// ahead of the failed one. Private cluster with logical decoding, real broker; the failure is a transient error of
// the client (a message timed out) injected once into the send of key a's first row, while the batch before it waits
// for its delete. The naive twin sends a's second row once the failed send is answered, before the failure is settled.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createEvent } from '../../src/envelope/event.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import type { WalOptions } from '../../src/outbox/relay-options.ts';
import { eventually, freshTopic, outboxCount } from '../support/fixtures.ts';
import { signal } from '../support/gates.ts';
import { keyOrder } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { walClusterPerFile } from '../support/wal-cluster.ts';
import { heldProducer, startedWalRelay } from '../support/wal-relay.ts';

const cluster = walClusterPerFile();

/** Key a's data.n on the topic, in topic order, once a1 (failed once) and a2 are published and deleted. */
async function afterFailedSend(t: TestContext, unsafe?: WalOptions['unsafe']): Promise<number[]> {
  const { db, schema } = await cluster().schema();
  const { transport, topic } = await freshTopic(t, 1);
  const bSettling = signal();
  const aSent = signal();
  let armed = false;
  let failed = false;
  await startedWalRelay(t, cluster(), db, schema, transport, {
    ...(unsafe ? { unsafe } : {}),
    producerFactory: heldProducer(transport, async (records) => {
      if (failed || !records.some((record) => String(record.key) === 'a')) return;
      failed = true;
      aSent.fire();
      await sleep(1000);
      throw Object.assign(new Error('Local: Message timed out'), { code: -192 });
    }),
    // Batch b's delete waits 4 s: the failure of the batch after it is not settled meanwhile.
    faults: async (point) => {
      if (point !== 'relay:after-publish' || !armed) return;
      armed = false;
      bSettling.fire();
      await sleep(4000);
    },
  });
  const outbox = createOutbox({ schema });
  const event = (key: string, n: number) => createEvent({ topic, type: 't', source: '/wal', key, data: { n } });
  armed = true;
  await db.transaction((tx) => outbox.enqueue(tx, [event('b', 1)]));
  await bSettling.fired;
  await db.transaction((tx) => outbox.enqueue(tx, [event('a', 1)]));
  await aSent.fired;
  await db.transaction((tx) => outbox.enqueue(tx, [event('a', 2)]));
  await eventually(async () => (await outboxCount(db, schema)) === 0, 30_000, 'every row published and deleted');
  return keyOrder(transport, topic, 'a');
}

test("a failed send stops later sends of its key: the key's rows reach the topic in order", async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const order = await afterFailedSend(t);
  assert.deepEqual(order, [1, 2], "key a's rows in order (a1 failed once, then both streamed again)");
});

test("naive twin (sends on until the failure settles) puts key a's second row on the topic ahead of its first", async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const order = await afterFailedSend(t, 'send-after-failed-send');
  assert.deepEqual(order, [2, 1, 2], 'a2 written while a1 failed, then both again after the restart');
});
