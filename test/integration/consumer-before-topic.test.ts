// The natural deploy order: the notification service is up before the first order, so its consumer starts before its
// topic exists. It says it waits (instead of 300 s of silence) and picks the topic up within seconds of its creation.
// Real broker and PostgreSQL. The naive twin runs the client's default metadata refresh (5 minutes) and misses it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function run(t: import('node:test').TestContext, rdkafka: Record<string, number>) {
  const { db, schema } = await freshSchema(t);
  const transport = kafkaTransport({ clientId: 'effectively-test', rdkafka });
  const topic = randomName('late').replace('_', '-');
  const admin = transport.admin();
  t.after(async () => {
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
  });
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (message) => void warnings.push(message) };
  let appliedAt = 0;
  const consumer = createConsumer({
    db,
    transport,
    schema,
    group: randomName('g'),
    topics: [topic],
    retention: false,
    logger,
    handler: async () => {
      appliedAt ||= Date.now();
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => warnings.some((w) => w.startsWith(`waiting for topic ${topic}`)), 10_000, 'a warning');
  await new Promise((resolve) => setTimeout(resolve, 5000));
  await admin.createTopics([{ topic, partitions: 3 }]);
  const createdAt = Date.now();
  const producer = transport.producer();
  t.after(() => producer.close());
  await producer.send([encodeEvent(createEvent({ topic, type: 'x', source: '/t', key: 'k', data: { n: 1 } }))]);
  await eventually(async () => appliedAt > 0, 12_000, 'the first event applied').catch(() => undefined);
  return { seconds: appliedAt ? (appliedAt - createdAt) / 1000 : Number.POSITIVE_INFINITY, warnings };
}

test('a consumer started before its topic says it waits and applies the first event within 10 s of its creation', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { seconds } = await run(t, {});
  console.log(`consumer-before-topic: first event applied ${seconds.toFixed(1)} s after the topic was created`);
  assert.ok(seconds <= 10, `applied ${seconds} s after creation`);
});

test('naive twin: with the client default metadata refresh the topic is not picked up within 10 s', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { seconds } = await run(t, { 'topic.metadata.refresh.interval.ms': 300_000 });
  assert.ok(seconds > 10, `the twin saw the topic after ${seconds} s: the test could not tell`);
});
