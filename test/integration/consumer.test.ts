// The idempotent consumer on the real broker and the real database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer, type EffectivelyConsumer } from '../../src/consumer/consumer.ts';
import { versionGuard } from '../../src/consumer/patterns.ts';
import type { Outcome } from '../../src/consumer/types.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { PermanentError, TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { OutgoingRecord } from '../../src/transport/port.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

function event(topic: string, key: string, n: number, version?: number): Event {
  return createEvent({
    topic,
    type: 'test.happened',
    source: '/test',
    key,
    data: { n },
    ...(version === undefined ? {} : { version }),
  });
}

async function setup(t: Parameters<typeof needs>[0], partitions = 1) {
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, partitions);
  await db.query(`CREATE TABLE ${schema}.applied (event_id uuid NOT NULL, n int NOT NULL)`);
  const producer = transport.producer();
  t.after(() => producer.close());
  const send = (records: OutgoingRecord[]) => producer.send(records);
  const effects = async () =>
    (await db.query<{ n: number }>(`SELECT n FROM ${schema}.applied ORDER BY n`)).rows.map((row) => row.n);
  const start = async ({ handler, batchHandler, ...options }: Partial<Parameters<typeof createConsumer>[0]> = {}) => {
    const consumer: EffectivelyConsumer = createConsumer({
      db,
      transport,
      group: randomName('group'),
      topics: [topic],
      schema,
      logger: silentLogger,
      retry: { baseMs: 20, capMs: 50 },
      ...(batchHandler
        ? { batchHandler }
        : {
            handler:
              handler ??
              (async (e, { tx }) => {
                await tx.query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [
                  e.id,
                  (e.data as { n: number }).n,
                ]);
              }),
          }),
      ...options,
    });
    t.after(() => consumer.close());
    await consumer.start();
    return consumer;
  };
  return { db, schema, transport, topic, send, effects, start };
}

test('the same event delivered twice, in one batch and in a later one, is applied once', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, effects, start } = await setup(t);
  const events = Array.from({ length: 10 }, (_, i) => event(topic, `k${i % 3}`, i));
  const outcomes: Outcome[] = [];
  // events 0..9, then 3 and 4 again in the same send (same batch), then all ten again later.
  await send([...events, events[3]!, events[4]!].map(encodeEvent));
  await start({ onOutcome: (_e, outcome) => outcomes.push(outcome) });
  await eventually(async () => outcomes.length === 12, 30_000, 'first delivery');
  await send(events.map(encodeEvent));
  await eventually(async () => outcomes.length === 22, 30_000, 'redelivery');
  assert.deepEqual(await effects(), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.equal(outcomes.filter((o) => o === 'applied').length, 10);
  assert.equal(outcomes.filter((o) => o === 'duplicate').length, 12);
});

test('a failing record is retried in place without undoing its neighbours, and applied once', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, effects, start, schema } = await setup(t);
  const events = Array.from({ length: 8 }, (_, i) => event(topic, 'same-key', i));
  let failures = 0;
  let committedDuringFailure: number[] = [];
  await send(events.map(encodeEvent));
  await start({
    handler: async (e, { tx }) => {
      const { n } = e.data as { n: number };
      if (n === 5 && failures < 2) {
        failures += 1;
        // Seen from another connection: by the second failure the records before it are committed.
        if (failures === 2) committedDuringFailure = await effects();
        throw new TransientError('provider hiccup');
      }
      await tx.query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [e.id, n]);
    },
  });
  await eventually(async () => (await effects()).length === 8, 30_000, 'all eight applied');
  assert.equal(failures, 2);
  assert.deepEqual(committedDuringFailure, [0, 1, 2, 3, 4]);
  assert.deepEqual(await effects(), [0, 1, 2, 3, 4, 5, 6, 7]);
});

test('an undecodable record becomes a typed dead letter and the partition moves on', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, effects, start, transport, db, schema } = await setup(t);
  const good = Array.from({ length: 6 }, (_, i) => event(topic, 'k', i)).map(encodeEvent);
  const poison: OutgoingRecord = { ...good[3]!, value: Buffer.from('{"n": 3,') };
  const dead: string[] = [];
  await send([good[0]!, good[1]!, good[2]!, poison, good[4]!, good[5]!]);
  const group = randomName('group');
  await start({
    group,
    onDeadLetter: ({ record, error }) => dead.push(`${record.offset}:${(error as { code: string }).code}`),
  });
  await eventually(async () => (await effects()).length === 5, 30_000, 'the five good records');
  assert.deepEqual(dead, ['3:EFF_DECODE_FAILED']);
  assert.deepEqual(await effects(), [0, 1, 2, 4, 5]);
  const letters = await deadLetterStore({ schema }).list(db);
  assert.equal(letters.length, 1);
  assert.equal(letters[0]!.code, 'EFF_DECODE_FAILED');
  assert.equal(letters[0]!.eventId, JSON.parse(JSON.stringify(poison.headers)).ce_id);
  assert.deepEqual(letters[0]!.payload, poison.value);
  const admin = transport.admin();
  t.after(() => admin.close());
  await eventually(
    async () => (await admin.committedOffsets(group, topic)).find((p) => p.partition === 0)?.offset === '6',
    10_000,
    'the offset past the dead letter',
  );
});

test('a permanent failure is dead-lettered at once; redrive after the fix applies it once, and again changes nothing', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, effects, start, transport, db, schema } = await setup(t);
  const events = Array.from({ length: 4 }, (_, i) => event(topic, 'k', i));
  let broken = true;
  let calls = 0;
  const outcomes: Outcome[] = [];
  await send(events.map(encodeEvent));
  await start({
    onOutcome: (_e, outcome) => outcomes.push(outcome),
    handler: async (e, { tx }) => {
      const { n } = e.data as { n: number };
      if (n === 2 && broken) {
        calls += 1;
        throw new PermanentError('order 2 refers to a show that does not exist yet');
      }
      await tx.query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [e.id, n]);
    },
  });
  const store = deadLetterStore({ schema });
  await eventually(
    async () => (await store.list(db)).length === 1 && (await effects()).length === 3,
    30_000,
    'dead letter',
  );
  assert.equal(calls, 1, 'a permanent error is not retried');
  assert.equal((await store.list(db))[0]!.eventId, events[2]!.id);

  broken = false;
  const producer = transport.producer();
  t.after(() => producer.close());
  const redriven = await store.redrive(db, producer);
  assert.equal(redriven.length, 1);
  await eventually(async () => (await effects()).length === 4, 30_000, 'the redriven event applied');
  assert.deepEqual(await effects(), [0, 1, 2, 3]);
  assert.deepEqual(await store.redrive(db, producer), [], 'a redriven letter is not redriven twice');

  // The same event published once more (a second redrive, a crash after the send): the dedup row absorbs it.
  await db.query(`UPDATE ${schema}.dead_letters SET status = 'dead'`);
  await store.redrive(db, producer);
  await eventually(async () => outcomes.filter((o) => o === 'duplicate').length === 1, 30_000, 'the duplicate');
  assert.deepEqual(await effects(), [0, 1, 2, 3]);
});

test('a transient failure that outlasts maxAttempts becomes a dead letter with its attempts', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, effects, start, db, schema } = await setup(t);
  await send([event(topic, 'k', 0), event(topic, 'k', 1)].map(encodeEvent));
  let calls = 0;
  await start({
    maxAttempts: 3,
    handler: async (e, { tx }) => {
      const { n } = e.data as { n: number };
      if (n === 0) {
        calls += 1;
        throw new TransientError('still down');
      }
      await tx.query(`INSERT INTO ${schema}.applied (event_id, n) VALUES ($1, $2)`, [e.id, n]);
    },
  });
  await eventually(async () => (await effects()).length === 1, 30_000, 'the second event');
  const [letter] = await deadLetterStore({ schema }).list(db);
  assert.equal(calls, 3);
  assert.equal(letter?.attempts, 3);
  assert.equal(letter?.code, 'EFF_HANDLER_FAILED');
  assert.match(letter?.reason ?? '', /still down/);
});

test('version guard: an old version delivered late is reported stale and does not overwrite', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, start, db, schema } = await setup(t);
  await db.query(`CREATE TABLE ${schema}.orders (id text PRIMARY KEY, status text NOT NULL, version int NOT NULL)`);
  await db.query(`INSERT INTO ${schema}.orders VALUES ('o1', 'new', 0)`);
  const outcomes: [number, Outcome][] = [];
  const v2 = createEvent({
    topic,
    type: 'order.status',
    source: '/t',
    key: 'o1',
    version: 2,
    data: { status: 'paid' },
  });
  const v1 = createEvent({
    topic,
    type: 'order.status',
    source: '/t',
    key: 'o1',
    version: 1,
    data: { status: 'placed' },
  });
  await send([v2, v1].map(encodeEvent));
  await start({
    onOutcome: (e, outcome) => outcomes.push([e.version!, outcome]),
    handler: (e, { tx }) =>
      versionGuard(tx, {
        table: `${schema}.orders`,
        id: { column: 'id', value: e.key },
        version: e.version!,
        set: { status: (e.data as { status: string }).status },
      }),
  });
  await eventually(async () => outcomes.length === 2, 30_000, 'both outcomes');
  assert.deepEqual(outcomes, [
    [2, 'applied'],
    [1, 'stale'],
  ]);
  const { rows } = await db.query<{ status: string; version: number }>(`SELECT status, version FROM ${schema}.orders`);
  assert.deepEqual(rows, [{ status: 'paid', version: 2 }]);
});

test('batch handler: a failing event is bisected out, the others applied, then it is applied once', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { topic, send, effects, start, schema } = await setup(t);
  const events = Array.from({ length: 8 }, (_, i) => event(topic, 'same-key', i));
  let failures = 0;
  let calls = 0;
  await send(events.map(encodeEvent));
  await start({
    batchHandler: async (fresh, { tx }) => {
      calls += 1;
      const numbers = fresh.map((e) => (e.data as { n: number }).n);
      if (numbers.includes(5) && failures < 4) {
        failures += 1;
        throw new TransientError('provider hiccup');
      }
      await tx.query(`INSERT INTO ${schema}.applied (event_id, n) SELECT unnest($1::uuid[]), unnest($2::int[])`, [
        fresh.map((e) => e.id),
        numbers,
      ]);
    },
  });
  await eventually(async () => (await effects()).length === 8, 30_000, 'all eight applied');
  assert.equal(failures, 4);
  assert.ok(calls > failures, 'the events around the failing one went through in their own calls');
  assert.deepEqual(await effects(), [0, 1, 2, 3, 4, 5, 6, 7]);
});
