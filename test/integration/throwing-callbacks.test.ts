// An application's callback that throws (issue 37, from reading). The callbacks report work already recorded; a throw
// went into the library and was read as that work's failure: a failed relay pass, an effect outcome "not recorded", a
// breaker move cut short (so the call's outcome was never recorded), a dead-letter check failed and repeated every
// interval, a record's batch failed after its commit. Now each is logged as the callback's own failure and the
// recorded work stands. Real PostgreSQL; the embedded log in the same database where a transport is needed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { createDeadLetterAlerts } from '../../src/deadletter/alerts.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { ProviderError } from '../../src/effects/provider.ts';
import { createSender } from '../../src/effects/sender.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** A logger that keeps every message (warnings and errors). */
function recording(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (message: string) => void lines.push(message);
  return { lines, debug: () => undefined, info: () => undefined, warn: keep, error: keep };
}

const boom = () => {
  throw new Error('callback bug');
};
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

test('relay: onPublished throws; the rows are published and deleted, no pass counted failed', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: {} })),
  );
  const logger = recording();
  let calls = 0;
  const relay = createRelay({
    db,
    schema,
    producerFactory: () => transport.producer(),
    errorBackoffMs: 50,
    logger,
    onPublished: () => {
      calls += 1;
      boom();
    },
  });
  t.after(() => relay.close());
  await relay.start();
  await eventually(async () => calls > 0, 10_000, 'onPublished called');
  await settle();
  const left = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox`);
  assert.equal(left.rows[0]?.n, 0);
  assert.equal(relay.stats().failingPasses, 0, `lines: ${logger.lines.join(' | ')}`);
  assert.equal(relay.stats().published, 1);
  assert.ok(!logger.lines.includes('relay pass failed; retrying'), logger.lines.join(' | '));
  assert.ok(logger.lines.includes('onPublished callback failed; what it reports stands'));
});

test('sender: onDone throws; the effect is done and its outcome counted recorded', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const effects = createEffects({ schema });
  const id = await db.transaction((tx) => effects.schedule(tx, { key: 'k', kind: 'email', payload: {} }));
  const logger = recording();
  let calls = 0;
  const sender = createSender({
    db,
    schema,
    logger,
    pollIntervalMs: 20,
    leaseMs: 1_500,
    callTimeoutMs: 1_000,
    provider: async () => {
      calls += 1;
      return { reference: 'sent' };
    },
    onDone: boom,
  });
  t.after(() => sender.close());
  await sender.start();
  await eventually(async () => (await effects.list(db, { ids: [id] }))[0]?.status === 'done', 10_000, 'done');
  await settle();
  assert.equal(sender.stats.done, 1);
  assert.equal(sender.stats.unrecorded, 0, logger.lines.join(' | '));
  assert.equal(calls, 1);
  assert.ok(logger.lines.includes('onDone callback failed; what it reports stands'));
});

test('sender: a breaker listener throws as the breaker opens; the failed call is still recorded as a retry', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const effects = createEffects({ schema });
  const id = await db.transaction((tx) => effects.schedule(tx, { key: 'k', kind: 'email', payload: {} }));
  const logger = recording();
  const sender = createSender({
    db,
    schema,
    logger,
    pollIntervalMs: 20,
    breaker: { minimumCalls: 1, failureRatio: 0.5, openMs: 60_000 },
    provider: async () => {
      throw new ProviderError('transient', 'provider down');
    },
  });
  t.after(() => sender.close());
  sender.breaker!.onStateChange(boom); // e.g. a metrics hook
  await sender.start();
  await eventually(async () => sender.stats.retried + sender.stats.unrecorded > 0, 10_000, 'the call settled');
  await settle();
  assert.equal(sender.breaker!.state, 'open');
  assert.equal(sender.stats.unrecorded, 0, logger.lines.join(' | '));
  assert.equal(sender.stats.retried, 1);
  const [effect] = await effects.list(db, { ids: [id] });
  assert.equal(effect?.attempts, 1);
  assert.match(effect?.lastError ?? '', /provider down/);
  assert.ok(logger.lines.includes('onStateChange callback failed; what it reports stands'));
});

test('alerts: onAlert throws; the letter is alerted once, not again at every check', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const out = encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: {} }));
  const headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, Buffer.from(v)]));
  const record: IncomingRecord = { ...out, key: Buffer.from('k'), partition: 0, offset: '0', headers, timestamp: 0 };
  await deadLetterStore({ schema }).keep(db, {
    consumer: 'c',
    record,
    eventId: null,
    error: new PermanentError('bad'),
    attempts: 1,
    firstFailedAt: new Date(),
  });
  const logger = recording();
  let alerts = 0;
  const watcher = createDeadLetterAlerts({
    db,
    schema,
    everyMs: 30,
    logger,
    onAlert: () => {
      alerts += 1;
      boom();
    },
  });
  t.after(() => watcher.close());
  await watcher.start();
  await eventually(async () => alerts > 0, 10_000, 'the alert');
  await new Promise((resolve) => setTimeout(resolve, 400)); // more than ten checks
  assert.equal(alerts, 1);
  assert.equal(watcher.dead, 1);
  assert.ok(!logger.lines.includes('dead-letter check failed'), logger.lines.join(' | '));
});

test('consumer: onOutcome throws; each record applied once, the offset moves past them, no dead letter', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  await db.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
  const producer = transport.producer();
  t.after(() => producer.close());
  await producer.send(
    [0, 1, 2].map((n) => encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n } }))),
  );
  const logger = recording();
  let outcomes = 0;
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger,
    retry: { baseMs: 10, capMs: 20 },
    maxAttempts: 2,
    handler: async (event, { tx }) => {
      await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [(event.data as { n: number }).n]);
    },
    onOutcome: () => {
      outcomes += 1;
      boom();
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const committed = async () => (await transport.admin().committedOffsets('g', 'orders'))[0]?.offset;
  await eventually(async () => (await committed()) === '3', 10_000, 'the offset past the three records');
  await settle();
  const { rows } = await db.query<{ n: number }>(`SELECT n FROM ${schema}.applied ORDER BY n`);
  assert.deepEqual(
    rows.map((row) => row.n),
    [0, 1, 2],
  );
  assert.equal(outcomes, 3);
  assert.equal((await deadLetterStore({ schema }).list(db)).length, 0);
  assert.ok(logger.lines.includes('onOutcome callback failed; what it reports stands'));
});
