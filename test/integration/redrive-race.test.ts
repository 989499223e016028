// Issue 11 item 4: a redrive reads its letters chunk by chunk and re-checks each letter's status in the chunk's
// transaction: a letter the operator discarded while the redrive ran is not republished (it used to be sent from a
// snapshot taken at the start). On the embedded transport the send and the mark are one commit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

async function setup(letters: number) {
  const db = await pgliteDb();
  const schema = 'redrive_race';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const store = deadLetterStore({ schema });
  for (let n = 1; n <= letters; n++) {
    const out = encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } }));
    const headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, Buffer.from(v)]));
    const record: IncomingRecord = {
      ...out,
      key: Buffer.from(`k${n}`),
      partition: 0,
      offset: String(n),
      headers,
      timestamp: 0,
    };
    await store.keep(db, {
      consumer: 'tickets',
      record,
      eventId: null,
      error: new PermanentError('bad'),
      attempts: 1,
      firstFailedAt: new Date(),
    });
  }
  const logged = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.log_records`)).rows[0]?.n ?? 0);
  const producer = transport.producer();
  return { db, store, logged, producer };
}

test('redrive race: a letter discarded while the redrive runs is not republished', async (t) => {
  const { db, store, logged, producer } = await setup(3);
  t.after(async () => {
    await producer.close();
    await db.close();
  });
  const ids = (await store.list(db)).map((letter) => letter.id);
  let discarded = -1;
  const sent = await store.redrive(
    db,
    producer,
    {},
    {
      chunkSize: 1,
      onProgress: async (done) => {
        // the operator discards the last letter once the first chunk went out
        if (done === 1) discarded = await store.discard(db, [ids[2]!]);
      },
    },
  );
  assert.equal(discarded, 1, 'the discard found the letter still dead');
  assert.deepEqual(
    sent.map((letter) => letter.offset),
    ['1', '2'],
  );
  assert.equal(await logged(), 2, 'the discarded letter was not sent');
  assert.deepEqual(
    (await store.list(db, { status: 'discarded' })).map((letter) => letter.offset),
    ['3'],
  );
});

test('redrive race (naive twin): sent from a snapshot taken at the start, the discarded letter goes out', async (t) => {
  const { db, store, logged, producer } = await setup(3);
  t.after(async () => {
    await producer.close();
    await db.close();
  });
  // The old redrive: every letter read once at the start, then sent one by one with no second look at its status.
  const snapshot = await store.list(db);
  let discarded = -1;
  for (const [index, letter] of snapshot.entries()) {
    await producer.send([
      { topic: letter.topic, key: letter.keyBytes, value: letter.payload, headers: letter.headers },
    ]);
    // the same discard at the same moment as above: once the first letter went out
    if (index === 0) discarded = await store.discard(db, [snapshot[2]!.id]);
  }
  assert.equal(discarded, 1, 'the discard found the letter still dead');
  assert.equal(await logged(), 3, 'the discarded letter was sent all the same');
});

test('redrive race: on the embedded transport a crash after the send undoes the send with the mark', async (t) => {
  const { db, store, logged, producer } = await setup(4);
  t.after(async () => {
    await producer.close();
    await db.close();
  });
  let crashed = false;
  const faults = async (point: string) => {
    if (point === 'redrive:after-send' && !crashed) {
      crashed = true;
      throw new Error('crashed after sending');
    }
  };
  await assert.rejects(store.redrive(db, producer, {}, { chunkSize: 2, faults }), /crashed after sending/);
  assert.equal(await logged(), 0, 'the send rolled back with the chunk');
  assert.equal((await store.redrive(db, producer, {}, { chunkSize: 2 })).length, 4);
  assert.equal(await logged(), 4, 'each sent exactly once');
});
