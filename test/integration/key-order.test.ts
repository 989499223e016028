// Key-ordered retries: while a record of key K is in retry or dead, later records of K are parked instead of
// overtaking it and applied in order once it is applied, redriven or discarded; other keys keep flowing. The naive twin
// (the same retry topics without key ordering) lets later records of K overtake: the check can see the failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Outcome } from '../../src/consumer/types.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { PermanentError, TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

interface Run {
  db: Db;
  schema: string;
  transport: Transport;
  topic: string;
}

const data = (event: Event) => event.data as { key: string; v: number };

function setup(run: Run, options: { keyOrdered: boolean; retryTopics: boolean }) {
  const { db, schema, transport, topic } = run;
  const make = (key: string, v: number) => createEvent({ topic, type: 'x', source: '/t', key, data: { key, v } });
  const order = new Map<string, number[]>();
  const outcomes: Outcome[] = [];
  let fixed = false;
  const failures = new Map<string, number>();
  const consumer = createConsumer({
    db,
    transport,
    group: randomName('g'),
    topics: [topic],
    schema,
    logger: silentLogger,
    keyOrdered: options.keyOrdered,
    drainIntervalMs: 200,
    ...(options.retryTopics ? { retryTopics: { delaysMs: [200, 400] } } : { maxAttempts: 2, retry: { baseMs: 50 } }),
    handler: async (event) => {
      const { key, v } = data(event);
      if (v === 1 && (key === 'dead' || key === 'dropped') && !fixed) throw new PermanentError('bad until fixed');
      if (v === 1 && key === 'slow' && (failures.get(key) ?? 0) < 2) {
        failures.set(key, (failures.get(key) ?? 0) + 1);
        throw new TransientError('twice');
      }
    },
    onOutcome: (event, outcome) => {
      outcomes.push(outcome);
      if (outcome !== 'applied') return;
      const { key, v } = data(event);
      order.set(key, [...(order.get(key) ?? []), v]);
    },
  });
  const fix = () => {
    fixed = true;
  };
  return { consumer, make, order, outcomes, fix };
}

async function keyOrderedRetries(run: Run) {
  const { consumer, make, order, outcomes } = setup(run, { keyOrdered: true, retryTopics: true });
  const producer = run.transport.producer();
  try {
    await consumer.start();
    const events = [make('slow', 1), make('slow', 2), make('slow', 3)];
    for (let i = 0; i < 12; i++) events.push(make(`other-${i}`, 1));
    events.push(make('slow', 4));
    await producer.send(events.map(encodeEvent));
    await eventually(async () => (order.get('slow')?.length ?? 0) === 4, 30_000, 'every record of the slow key');
    assert.deepEqual(order.get('slow'), [1, 2, 3, 4], 'per-key order kept through the retries');
    for (let i = 0; i < 12; i++) assert.deepEqual(order.get(`other-${i}`), [1]);
    assert.ok(outcomes.includes('parked'), 'later records of the key were parked');
  } finally {
    await consumer.close();
    await producer.close();
  }
}

async function overtakenWithoutKeyOrder(run: Run) {
  const { consumer, make, order } = setup(run, { keyOrdered: false, retryTopics: true });
  const producer = run.transport.producer();
  try {
    await consumer.start();
    await producer.send([make('slow', 1), make('slow', 2), make('slow', 3)].map(encodeEvent));
    await eventually(async () => (order.get('slow')?.length ?? 0) === 3, 30_000, 'every record of the slow key');
    assert.notDeepEqual(order.get('slow'), [1, 2, 3], 'without key order the later records overtake');
  } finally {
    await consumer.close();
    await producer.close();
  }
}

async function heldByDeadLetters(run: Run) {
  const { consumer, make, order, fix } = setup(run, { keyOrdered: true, retryTopics: false });
  const producer = run.transport.producer();
  const store = deadLetterStore({ schema: run.schema });
  try {
    await consumer.start();
    const events = [make('dead', 1), make('dropped', 1), make('dead', 2), make('dropped', 2), make('dead', 3)];
    for (let i = 0; i < 6; i++) events.push(make(`other-${i}`, 1));
    await producer.send(events.map(encodeEvent));
    await eventually(async () => (await store.list(run.db)).length === 2, 30_000, 'two dead letters');
    await eventually(async () => order.size === 6, 30_000, 'the other keys');
    assert.equal(order.get('dead'), undefined, 'nothing of a dead key overtakes its dead letter');
    assert.equal(order.get('dropped'), undefined);
    // Discarding releases its key: what was parked behind it is applied; the discarded record never.
    const dropped = (await store.list(run.db)).find((l) => l.key === 'dropped')!;
    await store.discard(run.db, [dropped.id]);
    await eventually(async () => order.get('dropped')?.length === 1, 30_000, 'the record parked behind the discarded');
    assert.deepEqual(order.get('dropped'), [2]);
    // The fix, then a redrive: the holder passes its own hold, then the parked records follow in order.
    fix();
    await store.redrive(run.db, producer);
    await eventually(async () => order.get('dead')?.length === 3, 30_000, 'the redriven key');
    assert.deepEqual(order.get('dead'), [1, 2, 3]);
  } finally {
    await consumer.close();
    await producer.close();
  }
}

async function embedded(t: import('node:test').TestContext, partitions: number): Promise<Run> {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'key_order';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions }]);
  return { db, schema, transport, topic: 'orders' };
}

async function kafka(t: import('node:test').TestContext, partitions: number): Promise<Run> {
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, partitions);
  t.after(async () => {
    const admin = transport.admin();
    await admin.deleteTopics([`${topic}-retry-1`, `${topic}-retry-2`, `${topic}-dlt`]).catch(() => undefined);
    await admin.close();
  });
  return { db, schema, transport, topic };
}

test('embedded: key-ordered retries keep per-key order through retry topics', async (t) => {
  await keyOrderedRetries(await embedded(t, 2));
});

test('embedded: a dead letter holds its key until redriven or discarded', async (t) => {
  await heldByDeadLetters(await embedded(t, 2));
});

test('embedded naive twin: without key order, later records of the key overtake the one in retry', async (t) => {
  await overtakenWithoutKeyOrder(await embedded(t, 1));
});

test('kafka: key-ordered retries keep per-key order through retry topics', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  await keyOrderedRetries(await kafka(t, 2));
});

test('kafka: a dead letter holds its key until redriven or discarded', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  await heldByDeadLetters(await kafka(t, 2));
});
