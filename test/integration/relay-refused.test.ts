// Outbox rows the transport refuses for good are set aside (visible, alerting); the rest flows, and no later row of
// the refused row's key overtakes it. Real broker (a topic with a small max.message.bytes) and real PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { EffectivelyError, ErrorCodes } from '../../src/errors.ts';
import { type Logger, silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { classifySendFailure } from '../../src/outbox/refusal.ts';
import { discardRefused, listRefused, retryRefused } from '../../src/outbox/refused.ts';
import { createRelay, type RefusedEvent } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

/** The issue's shape: key K small, K 300 KB, K small, then 300 small events of other keys, in one transaction. */
function issueShape(topic: string) {
  const event = (key: string, n: number, pad = 0) =>
    createEvent({ topic, type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } });
  return [
    event('K', 1),
    event('K', 2, 300_000),
    event('K', 3),
    ...Array.from({ length: 300 }, (_, i) => event(`other-${i}`, 100 + i)),
  ];
}

async function enqueue(db: Db, schema: string, events: Event[]) {
  const outbox = createOutbox({ schema });
  await db.transaction((tx) => outbox.enqueue(tx, events));
}

/** Per key, the `n` of each distinct event in the order the topic holds them (a republished copy counts once). */
async function orderOnTopic(topic: string): Promise<Map<string, number[]>> {
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const admin = transport.admin();
  const ends = await admin.endOffsets(topic);
  await admin.close();
  const total = ends.reduce((sum, end) => sum + Number(end.offset), 0);
  const seen = new Set<string>();
  const byKey = new Map<string, number[]>();
  for (const record of await readTopic(transport, topic, total)) {
    const event = decodeEvent(record);
    if (seen.has(event.id)) continue;
    seen.add(event.id);
    byKey.set(event.key, [...(byKey.get(event.key) ?? []), (event.data as { n: number }).n]);
  }
  return byKey;
}

function capture(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { ...silentLogger, errors, error: (message) => errors.push(message) };
}

test('a row bigger than its topic allows is set aside with its code, the other 300 flow, and K waits behind it', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 100_000, partitions: 3 });
  await enqueue(db, schema, issueShape(topic));
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const refused: RefusedEvent[] = [];
  const logger = capture();
  const relay = createRelay({
    db,
    schema,
    producer: transport.producer(),
    producerFactory: () => transport.producer(),
    // The topic's limit, told: K's row behind the big one never travels beside it (separate batches, under load).
    maxMessageBytes: 100_000,
    logger,
    onRefused: (row) => refused.push(row),
  });
  t.after(() => relay.close());
  await relay.start();
  await eventually(async () => refused.length === 1, 30_000, 'the 300 KB row set aside');
  const pending = async () =>
    Number(
      (
        await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${schema}.outbox WHERE key <> 'K'`, // K's third row is held on purpose
        )
      ).rows[0]?.n,
    );
  await eventually(async () => (await pending()) === 0, 30_000, 'the other rows published');

  assert.equal(refused[0]?.key, 'K');
  assert.equal(refused[0]?.errorCode, 'ERR_MSG_SIZE_TOO_LARGE');
  assert.ok(
    logger.errors.some((line) => line.includes('set aside')),
    'the refusal is logged as an error',
  );
  const [row, ...more] = await listRefused(db, { schema });
  assert.equal(more.length, 0);
  assert.equal(row?.key, 'K');
  assert.equal(row?.errorCode, 'ERR_MSG_SIZE_TOO_LARGE');
  assert.equal(row?.held, 1, "K's third row waits in the outbox behind it");

  const byKey = await orderOnTopic(topic);
  const others = [...byKey.keys()].filter((key) => key.startsWith('other-'));
  assert.equal(others.length, 300, 'all 300 other events arrived');
  assert.deepEqual(byKey.get('K'), [1], "K's later row did not overtake the refused one");

  // The operator gives up on the row: K's held row flows, still after K's first.
  assert.equal(await discardRefused(db, { schema }), 1);
  await eventually(async () => (await listRefused(db, { schema })).length === 0 && (await pending()) === 0);
  await eventually(
    async () => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n) === 0,
    30_000,
    "K's held row published after the discard",
  );
  assert.deepEqual((await orderOnTopic(topic)).get('K'), [1, 3]);
});

test('naive twin: the whole chunk, sent again as the old relay did, is refused every time and never completes', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const topic = await smallTopic(t, { maxMessageBytes: 100_000, partitions: 3 });
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const producer = transport.producer();
  t.after(() => producer.close());
  const records = issueShape(topic).map((event) => ({
    topic,
    key: event.key,
    value: Buffer.from(JSON.stringify(event.data)),
    headers: {},
  }));
  // The old relay: send the chunk, roll back on a rejection, send the same chunk again (every second, for ever).
  for (let attempt = 0; attempt < 3; attempt++) {
    const failure = await producer.send(records).then(
      () => undefined,
      (error: unknown) => classifySendFailure(error),
    );
    assert.deepEqual(failure, { failure: 'refused', code: 'ERR_MSG_SIZE_TOO_LARGE' }, `attempt ${attempt + 1}`);
  }
});

test('a transient client error sets nothing aside: the rows wait and the relay retries', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const big = (n: number) =>
    createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'K', data: { n, pad: 'x'.repeat(2_000) } });
  await enqueue(db, schema, [1, 2, 3, 4, 5].map(big));
  // A local queue of 1 KB: not one of these 2 KB records fits, so every send fails with ERR__QUEUE_FULL down to a
  // single record, a transient error (as a broker that is down: the client gives up after message.timeout.ms with
  // ERR__MSG_TIMED_OUT, also transient). A send that only overfills the queue is split instead (relay-queue-full).
  const full = kafkaTransport({ clientId: 'effectively-test', rdkafka: { 'queue.buffering.max.kbytes': 1 } });
  const failures: Record<string, unknown>[] = [];
  const relay = createRelay({
    db,
    schema,
    producer: full.producer(),
    producerFactory: () => full.producer(),
    errorBackoffMs: 50,
    logger: { ...silentLogger, error: (message, fields) => failures.push({ message, ...fields }) },
  });
  t.after(() => relay.close());
  await relay.start();
  await eventually(async () => failures.length >= 3, 30_000, '3 failed passes');
  assert.ok(failures.every((failure) => String(failure.message).includes('pass failed')));
  assert.equal((await listRefused(db, { schema })).length, 0, 'nothing set aside');
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`);
  assert.equal(Number(rows[0]?.n), 5, 'every row still waits');
});

test('broker-down and time-out codes are transient, refusals and fatal errors are told apart by code', () => {
  const kafkaError = (code: number) => Object.assign(new Error('any text'), { code });
  assert.equal(classifySendFailure(kafkaError(-195)).failure, 'transient', 'ERR__TRANSPORT');
  assert.equal(classifySendFailure(kafkaError(-187)).failure, 'transient', 'ERR__ALL_BROKERS_DOWN');
  assert.equal(classifySendFailure(kafkaError(-192)).failure, 'transient', 'ERR__MSG_TIMED_OUT');
  assert.equal(classifySendFailure(kafkaError(7)).failure, 'transient', 'ERR_REQUEST_TIMED_OUT');
  assert.equal(classifySendFailure(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).failure, 'transient');
  assert.equal(classifySendFailure(Object.assign(new Error('x'), { code: '57P01' })).failure, 'transient');
  assert.deepEqual(classifySendFailure(kafkaError(17)), { failure: 'refused', code: 'ERR_TOPIC_EXCEPTION' });
  assert.deepEqual(classifySendFailure(kafkaError(18)), { failure: 'refused', code: 'ERR_RECORD_LIST_TOO_LARGE' });
  assert.deepEqual(classifySendFailure(kafkaError(3)), { failure: 'refused', code: 'ERR_UNKNOWN_TOPIC_OR_PART' });
  assert.deepEqual(classifySendFailure(kafkaError(-150)), { failure: 'fatal', code: 'ERR__FATAL' });
  assert.deepEqual(classifySendFailure(kafkaError(-184)), { failure: 'too-much', code: 'ERR__QUEUE_FULL' });
  // A transport's coded refusal counts even under a retryable wrapper; a closed producer does not.
  const wrapped = (cause: Error) =>
    new EffectivelyError(ErrorCodes.EFF_TRANSPORT, 'send failed', { retryable: true, cause });
  assert.deepEqual(classifySendFailure(wrapped(new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, 'NUL'))), {
    failure: 'refused',
    code: 'EFF_INVALID_EVENT',
  });
  assert.equal(classifySendFailure(new EffectivelyError(ErrorCodes.EFF_CLOSED, 'closed')).failure, 'transient');
  // The message text plays no part: a refusal's words on a transient code stay transient.
  const worded = Object.assign(new Error('Broker: Message size too large'), { code: -195 });
  assert.equal(classifySendFailure(worded).failure, 'transient');
});

test('embedded log: a row its log refuses (a CHECK on record size) is set aside; retried after the fix, K keeps its order', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  // The log refuses records over 1000 bytes (as Kafka's max.message.bytes), with a real SQLSTATE 23514.
  await db.query(`ALTER TABLE ${schema}.log_records ADD CONSTRAINT small CHECK (length(value) < 1000)`);
  const event = (key: string, n: number, pad = 0) =>
    createEvent({ topic: 'orders', type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } });
  await enqueue(db, schema, [
    event('K', 1),
    event('K', 2, 2000),
    event('K', 3),
    ...Array.from({ length: 50 }, (_, i) => event(`other-${i}`, 100 + i)),
  ]);
  const transport = postgresTransport({ db, schema });
  const refused: RefusedEvent[] = [];
  const relay = createRelay({
    db,
    schema,
    producer: transport.producer(),
    producerFactory: () => transport.producer(),
    logger: silentLogger,
    listen: false,
    onRefused: (row) => refused.push(row),
  });
  t.after(() => relay.close());
  assert.equal(await relay.drain(), 51, "everything but K's refused row and the row held behind it");
  assert.deepEqual(
    refused.map((row) => [row.key, row.errorCode]),
    [['K', '23514']],
  );
  const logged = async (): Promise<number[]> => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT (convert_from(value, 'UTF8')::jsonb ->> 'n')::int AS n
         FROM ${schema}.log_records WHERE key = 'K' ORDER BY "offset"`,
    );
    return rows.map((row) => row.n);
  };
  assert.deepEqual(await logged(), [1], 'K stops at its refused row');
  assert.equal((await listRefused(db, { schema }))[0]?.held, 1);

  // The operator fixes the cause and retries: the row goes out first, then the one held behind it.
  await db.query(`ALTER TABLE ${schema}.log_records DROP CONSTRAINT small`);
  assert.equal(await retryRefused(db, { schema }), 1);
  assert.equal(await relay.drain(), 2);
  assert.deepEqual(await logged(), [1, 2, 3]);
  assert.equal((await listRefused(db, { schema })).length, 0);
});
