// One order through outbox → relay → consumer → effect (the sender's provider call), with an in-memory span exporter:
// every hop is a span of ONE trace, each the child of the hop before (the trace context travels in the outbox row,
// the record's headers and the effect's row). Naive twin: the row's `traceparent` lost before the relay publishes it:
// the same check must then fail. On the embedded log (PGlite), and on Kafka.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { createSender } from '../../src/effects/sender.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic } from '../support/fixtures.ts';
import { registerOtel } from '../support/otel.ts';
import { needs } from '../support/services.ts';

const otel = registerOtel();
const hops = ['POST /orders', 'send T', 'publish T', 'process T', 'commit T', 'effect email'] as const;

interface Setup {
  db: Db;
  schema: string;
  transport: Transport;
  topic: string;
}

/** One order, from an HTTP request's span to the e-mail provider's call; `dropAtRelay`: the naive relay. */
async function order(setup: Setup, dropAtRelay: boolean): Promise<ReadableSpan[]> {
  const { db, schema, transport, topic } = setup;
  otel.reset();
  const outbox = createOutbox({ schema });
  const effects = createEffects({ schema });
  const event = createEvent({ topic, type: 'order.confirmed', source: '/orders', key: 'order-1', data: { n: 1 } });
  await trace.getTracer('app').startActiveSpan('POST /orders', async (span) => {
    await db.transaction((tx) => outbox.enqueue(tx, event));
    span.end();
  });
  if (dropAtRelay) await db.query(`UPDATE ${schema}.outbox SET headers = headers - 'traceparent'`);
  const relay = createRelay({ db, schema, producerFactory: () => transport.producer(), logger: silentLogger });
  assert.equal(await relay.drain(10_000), 1);
  await relay.close();
  const consumer = createConsumer({
    db,
    transport,
    schema,
    group: 'otel-g',
    topics: [topic],
    logger: silentLogger,
    sessionTimeoutMs: 6000,
    handler: async (e, { tx }) => {
      await effects.schedule(tx, { key: e.key, kind: 'email', payload: { order: e.key } });
    },
  });
  const called: string[] = [];
  const sender = createSender({
    db,
    schema,
    pollIntervalMs: 20,
    logger: silentLogger,
    provider: async (effect) => {
      called.push(effect.id);
      return { reference: 'm-1' };
    },
  });
  await consumer.start();
  await sender.start();
  try {
    await eventually(async () => called.length === 1 && otel.spans().some((s) => s.name === 'effect email'));
  } finally {
    await sender.close();
    await consumer.close();
  }
  return otel.spans();
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Every hop present once, all in the trace of the request, each the child of the one before. */
function assertOneTrace(spans: ReadableSpan[], topic: string): void {
  const named = (name: string) => {
    const wanted = name.replace(/ T$/, ` ${topic}`);
    const found = spans.filter((span) => span.name === wanted);
    assert.equal(found.length, 1, `one span ${wanted}; spans: ${spans.map((s) => s.name).join(', ')}`);
    return found[0]!;
  };
  const [request, send, publish, process, commit, effect] = hops.map(named) as ReadableSpan[] & { length: 6 };
  const traceId = request!.spanContext().traceId;
  for (const span of [send, publish, process, commit, effect]) {
    assert.equal(span!.spanContext().traceId, traceId, `${span!.name} in the request's trace`);
  }
  assert.equal(parentOf(send!), request!.spanContext().spanId, 'send: child of the request');
  assert.equal(parentOf(publish!), send!.spanContext().spanId, 'publish: child of send');
  assert.equal(parentOf(process!), send!.spanContext().spanId, 'process: child of send (the message context)');
  assert.equal(parentOf(commit!), send!.spanContext().spanId, 'commit: child of send');
  assert.equal(parentOf(effect!), process!.spanContext().spanId, 'effect: child of process');
}

/** The kinds and the messaging attributes of each hop. */
function assertConventions(spans: ReadableSpan[], topic: string, system: string): void {
  const by = (name: string) => spans.find((span) => span.name === name)!;
  const send = by(`send ${topic}`);
  assert.equal(send.kind, 3 /* PRODUCER */);
  assert.equal(send.attributes['messaging.destination.name'], topic);
  assert.equal(send.attributes['messaging.operation.type'], 'send');
  assert.equal(by(`publish ${topic}`).attributes['messaging.system'], system);
  const process = by(`process ${topic}`);
  assert.equal(process.kind, 4 /* CONSUMER */);
  assert.equal(process.attributes['messaging.consumer.group.name'], 'otel-g');
  assert.equal(process.attributes['messaging.destination.partition.id'], '0');
  assert.equal(process.attributes['messaging.message.id'], send.attributes['messaging.message.id']);
  assert.equal(by(`commit ${topic}`).attributes['effectively.dedup.applied'], 1);
  assert.equal(by('effect email').attributes['effectively.effect.kind'], 'email');
}

// One PGlite for the file (its start is the slow part), a schema per test.
let shared: Promise<Db> | undefined;
after(async () => (await shared)?.close());

async function embedded(schema: string): Promise<Setup> {
  shared ??= pgliteDb();
  const db = await shared;
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10, logger: silentLogger });
  const topic = 'otel-orders';
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  return { db, schema, transport, topic };
}

test('embedded: one trace from the request to the provider call, every hop the child of the one before', async () => {
  const setup = await embedded('otel_a');
  const spans = await order(setup, false);
  assertOneTrace(spans, setup.topic);
  assertConventions(spans, setup.topic, 'effectively');
  const recorded = await otel.metrics();
  const consumed = recorded.get('messaging.client.consumed.messages')?.[0];
  assert.equal(consumed?.value, 1);
  assert.equal(consumed?.attributes['messaging.consumer.group.name'], 'otel-g');
  assert.equal(recorded.get('messaging.client.sent.messages')?.[0]?.value, 1);
  const duration = recorded.get('messaging.process.duration')?.[0]?.value as { count: number } | undefined;
  assert.equal(duration?.count, 1);
});

test('embedded naive twin: the traceparent dropped at the relay breaks the trace, and the check sees it', async () => {
  const setup = await embedded('otel_b');
  const spans = await order(setup, true);
  assert.throws(() => assertOneTrace(spans, setup.topic), assert.AssertionError);
});

test('embedded batch handler: one process span for the batch, linked to the send span of each event', async () => {
  const { db, schema, transport, topic } = await embedded('otel_c');
  otel.reset();
  const outbox = createOutbox({ schema });
  const tracer = trace.getTracer('app');
  for (const key of ['a', 'b', 'c']) {
    // Three requests, three traces.
    await tracer.startActiveSpan(`POST /orders/${key}`, async (span) => {
      const event = createEvent({ topic, type: 'order.confirmed', source: '/orders', key, data: {} });
      await db.transaction((tx) => outbox.enqueue(tx, event));
      span.end();
    });
  }
  const relay = createRelay({ db, schema, producerFactory: () => transport.producer(), logger: silentLogger });
  assert.equal(await relay.drain(10_000), 3);
  await relay.close();
  let seen = 0;
  const consumer = createConsumer({
    db,
    transport,
    schema,
    group: 'otel-batch',
    topics: [topic],
    logger: silentLogger,
    batchHandler: async (events) => {
      seen += events.length;
    },
  });
  await consumer.start();
  await eventually(async () => seen === 3);
  await consumer.close();
  const spans = otel.spans();
  const sends = spans.filter((span) => span.name === `send ${topic}`).map((span) => span.spanContext());
  assert.equal(new Set(sends.map((c) => c.traceId)).size, 3, 'three traces');
  const [process] = spans.filter((span) => span.name === `process ${topic}`);
  assert.ok(process, spans.map((s) => s.name).join());
  assert.equal(process.parentSpanContext, undefined, 'a batch span is a root');
  assert.equal(process.attributes['messaging.batch.message_count'], 3);
  const linked = process.links.map((link) => `${link.context.traceId}/${link.context.spanId}`).sort();
  assert.deepEqual(linked, sends.map((c) => `${c.traceId}/${c.spanId}`).sort(), 'a link to each send span');
});

test('kafka: the same trace through the broker', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const spans = await order({ db, schema, transport, topic }, false);
  assertOneTrace(spans, topic);
  assertConventions(spans, topic, 'kafka');
});
