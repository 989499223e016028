// Redrive refuses a replay older than the group's dedup window unless forced, and a bulk redrive in chunks resumes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError, ErrorCodes, PermanentError } from '../../src/errors.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';

async function setup() {
  const db = await pgliteDb();
  const schema = 'redrive';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 2 }]);
  const store = deadLetterStore({ schema });
  const keep = async (n: number, failedAgoMs: number) => {
    const out = encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } }));
    const headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, Buffer.from(v)]));
    const key = Buffer.from(`k${n}`);
    const record: IncomingRecord = { ...out, key, partition: 0, offset: String(n), headers, timestamp: Date.now() };
    await store.keep(db, {
      consumer: 'tickets',
      record,
      eventId: null,
      error: new PermanentError('bad'),
      attempts: 1,
      firstFailedAt: new Date(Date.now() - failedAgoMs),
    });
  };
  const logged = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.log_records`)).rows[0]?.n ?? 0);
  return { db, schema, transport, store, keep, logged };
}

test('redrive refuses dead letters older than the dedup retention unless forced', async (t) => {
  const { db, schema, transport, store, keep, logged } = await setup();
  t.after(() => db.close());
  await db.query(`INSERT INTO ${schema}.consumer_groups (name, dedup_keep_ms) VALUES ('tickets', 60000)`);
  await keep(1, 5_000); // inside the window
  await keep(2, 3_600_000); // an hour ago: the dedup rows of that time may be gone
  const producer = transport.producer();
  t.after(() => producer.close());
  await assert.rejects(
    store.redrive(db, producer, { consumer: 'tickets' }),
    (error: unknown) =>
      error instanceof EffectivelyError &&
      error.code === ErrorCodes.EFF_REDRIVE_BEYOND_RETENTION &&
      (error.details.ids as string[]).length === 1,
  );
  assert.equal(await logged(), 0, 'nothing sent when refused');
  const sent = await store.redrive(db, producer, { consumer: 'tickets' }, { force: true });
  assert.equal(sent.length, 2);
  assert.equal(await logged(), 2);
});

test('a bulk redrive stopped between chunks resumes with the letters still dead', async (t) => {
  const { db, transport, store, keep, logged } = await setup();
  t.after(() => db.close());
  for (let n = 1; n <= 10; n++) await keep(n, 0);
  const producer = transport.producer();
  t.after(() => producer.close());
  const stop = new AbortController();
  const progress: number[] = [];
  const first = await store.redrive(
    db,
    producer,
    {},
    {
      chunkSize: 3,
      signal: stop.signal,
      onProgress: (done) => {
        progress.push(done);
        if (done >= 6) stop.abort();
      },
    },
  );
  assert.deepEqual(progress, [3, 6]);
  assert.equal(first.length, 6);
  assert.equal((await store.list(db)).length, 4, 'four still dead');
  const rest = await store.redrive(db, producer, {}, { chunkSize: 3 });
  assert.deepEqual(
    rest.map((l) => l.offset),
    ['7', '8', '9', '10'],
  );
  assert.equal(await logged(), 10, 'each sent once');
});
