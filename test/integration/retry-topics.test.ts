// Non-blocking retries through retry topics, on every transport: a record failing transiently is forwarded to
// `<topic>-retry-1`, `-retry-2`, applied there once it passes; one failing for good ends on `<topic>-dlt` with complete
// headers and is kept in dead_letters at its original coordinates, with the same event id. The partition never waits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { RetryHeaders } from '../../src/consumer/retry-topics.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

async function retryThroughTopics(db: Db, schema: string, transport: Transport, topic: string) {
  const group = randomName('g');
  const make = (key: string, n: number) => createEvent({ topic, type: 'x', source: '/t', key, data: { key, n } });
  const events = Array.from({ length: 20 }, (_, n) => make(n === 3 ? 'flaky' : n === 7 ? 'broken' : `k${n}`, n));
  const flaky = events[3]!;
  const broken = events[7]!;
  // Where each event failed, and the order of the commits (a handler call rolled back with its range is no apply).
  const failedOn = new Map<string, string[]>();
  const applied: string[] = [];
  const appliedOn = new Map<string, string>();
  const fail = (event: Event, topic: string, message: string): never => {
    failedOn.set(event.id, [...(failedOn.get(event.id) ?? []), topic]);
    throw new TransientError(message);
  };
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    logger: silentLogger,
    retryTopics: { delaysMs: [300, 600] },
    handler: async (event: Event, { record }) => {
      if (event.id === broken.id) fail(event, record.topic, 'provider down for good');
      if (event.id === flaky.id && (failedOn.get(event.id)?.length ?? 0) < 2)
        fail(event, record.topic, 'provider down');
      appliedOn.set(event.id, record.topic);
    },
    onOutcome: (event, outcome) => {
      if (outcome === 'applied') applied.push(event.id);
    },
  });
  const producer = transport.producer();
  try {
    await consumer.start();
    await producer.send(events.map(encodeEvent));
    const store = deadLetterStore({ schema });
    await eventually(async () => applied.length === 19 && (await store.list(db)).length === 1, 30_000, 'all settled');
    // The flaky event went main → retry-1 → retry-2 and was applied there, once; the others did not wait for it.
    assert.deepEqual(failedOn.get(flaky.id), [topic, `${topic}-retry-1`]);
    assert.equal(appliedOn.get(flaky.id), `${topic}-retry-2`);
    assert.equal(applied.indexOf(flaky.id), 18, 'applied last: everything else overtook it (non-blocking)');
    assert.equal(new Set(applied).size, 19);
    // The broken one tried on every topic of the chain, then kept as a dead letter where it came from.
    assert.deepEqual(failedOn.get(broken.id), [topic, `${topic}-retry-1`, `${topic}-retry-2`]);
    const [letter] = await store.list(db);
    assert.equal(letter!.eventId, broken.id);
    assert.equal(letter!.topic, topic);
    assert.equal(letter!.attempts, 3);
    assert.equal(letter!.code, 'EFF_HANDLER_FAILED');
    assert.match(letter!.reason, /TransientError: provider down for good/);
    assert.ok(!Object.keys(letter!.headers).some((h) => h.startsWith('effectively-')), 'kept as produced');
    // The DLT record carries everything an operator needs.
    const [dlt] = await readTopic(transport, `${topic}-dlt`, 1);
    const header = (name: string) => dlt!.headers[name]?.toString();
    assert.equal(header('ce_id'), broken.id, 'the event id never changes');
    assert.equal(header(RetryHeaders.attempt), '3');
    assert.equal(header(RetryHeaders.group), group);
    assert.equal(header(RetryHeaders.originalTopic), topic);
    assert.equal(header(RetryHeaders.originalPartition), String(letter!.partition));
    assert.equal(header(RetryHeaders.originalOffset), letter!.offset);
    assert.ok(Number(header(RetryHeaders.originalTimestamp)) > 0);
    assert.ok(Number(header(RetryHeaders.due)) > 0);
    assert.equal(header(RetryHeaders.errorClass), 'TransientError');
    assert.equal(header(RetryHeaders.errorCode), 'EFF_HANDLER_FAILED');
    assert.equal(header(RetryHeaders.errorMessage), 'provider down for good');
    assert.match(header(RetryHeaders.errorStack) ?? '', /TransientError: provider down for good\n\s+at /);
  } finally {
    await consumer.close();
    await producer.close();
  }
}

test('kafka: failing records go through the retry topics to the DLT; the partition never waits', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 2);
  t.after(async () => {
    const admin = transport.admin();
    await admin.deleteTopics([`${topic}-retry-1`, `${topic}-retry-2`, `${topic}-dlt`]).catch(() => undefined);
    await admin.close();
  });
  await retryThroughTopics(db, schema, transport, topic);
});

test('embedded: failing records go through the retry topics to the DLT; the partition never waits', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'retry_topics';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 2 }]);
  await retryThroughTopics(db, schema, transport, 'orders');
});

test('embedded: a retry topic that cannot be written: the record becomes a dead letter, the partition moves on', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'unwritable';
  await migrate(db, { schema });
  const inner = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await inner.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  // The same transport, except that nothing can be written to the first retry topic.
  const transport: Transport = {
    ...inner,
    name: inner.name,
    consumer: (options) => inner.consumer(options),
    admin: () => inner.admin(),
    producer: (options) => {
      const producer = inner.producer(options);
      return {
        ...producer,
        connect: () => producer.connect(),
        close: () => producer.close(),
        send: async (records) => {
          if (records.some((r) => r.topic.endsWith('-retry-1'))) throw new Error('RecordTooLarge');
          await producer.send(records);
        },
      };
    },
  };
  const applied: number[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger: silentLogger,
    retry: { baseMs: 1, capMs: 5 },
    retryTopics: { delaysMs: [100] },
    handler: async (event) => {
      const { n } = event.data as { n: number };
      if (n === 1) throw new TransientError('down');
    },
    onOutcome: (event, outcome) => {
      if (outcome === 'applied') applied.push((event.data as { n: number }).n);
    },
  });
  const producer = inner.producer();
  t.after(async () => {
    await consumer.close();
    await producer.close();
  });
  await consumer.start();
  const make = (n: number) => createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n } });
  await producer.send([make(0), make(1), make(2)].map(encodeEvent));
  const store = deadLetterStore({ schema });
  await eventually(async () => applied.length === 2 && (await store.list(db)).length === 1, 30_000, 'settled');
  const [letter] = await store.list(db);
  assert.match(letter!.reason, /forwarding to orders-retry-1 failed: .*RecordTooLarge/);
  assert.deepEqual(applied, [0, 2]);
});
