// Retry topics' due times come from the forwarding member's clock (issue 27, item 8). A member whose clock is 30 days
// ahead forwards a record due 30 days from here: Node fires a timer of more than 2^31-1 ms at once, so the partition
// was paused and resumed every millisecond and the record never tried. A due time further away than the retry topic's
// own delay cannot come from a forward made now: the record is tried at once and the skew is logged. Real PostgreSQL,
// the postgres transport.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { RetryTopics } from '../../src/consumer/retry-topics.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { type Logger, silentLogger } from '../../src/observability/logger.ts';
import type { Headers } from '../../src/transport/port.ts';
import { embeddedLog } from '../support/embedded-log.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const days30 = 30 * 24 * 3600 * 1000;

test('a retry topic record due 30 days away (a forwarder clock ahead) is tried now and the skew logged', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { consumerOf, transport } = await embeddedLog(t);
  const topic = 'skewed';
  const delaysMs = [200];
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  // What a member whose clock is 30 days ahead forwards after a first failed attempt.
  const sent = encodeEvent(createEvent({ topic, type: 't', source: '/skew', key: 'k', data: { n: 1 } }));
  const original = {
    topic,
    partition: 0,
    offset: '0',
    key: Buffer.from('k'),
    value: sent.value,
    headers: Object.fromEntries(Object.entries(sent.headers).map(([k, v]) => [k, Buffer.from(v)])) as Headers,
    timestamp: Date.now(),
  };
  const forwarded = new RetryTopics([topic], { delaysMs }).forward(
    original,
    new Error('first try'),
    1,
    'g',
    false,
    Date.now() + days30,
  );
  assert.equal(forwarded.topic, `${topic}-retry-1`);
  const producer = transport.producer();
  await producer.send([forwarded]);
  await producer.close();
  const warnings: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger: Logger = { ...silentLogger, warn: (message, fields) => warnings.push({ message, fields }) };
  const applied: number[] = [];
  const consumer = createConsumer({
    ...consumerOf(topic),
    logger,
    retryTopics: { delaysMs },
    handler: async (event) => {
      applied.push((event.data as { n: number }).n);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => applied.length > 0, 10_000, 'the forwarded record tried');
  await consumer.close();
  assert.deepEqual(applied, [1]);
  const skew = warnings.find((w) => w.message.includes('due further away'));
  assert.ok(skew, 'the skew is logged');
  assert.ok(Number(skew.fields?.skewMs) > days30 - 60_000, `skew of about 30 days: ${skew.fields?.skewMs} ms`);
});
