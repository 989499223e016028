// Durations past 2^31 ms (issue 37, from reading; the sender's lease and retry cap are in sender-long-durations). The
// SQL takes any length (double precision, bigint); the Node timers do not: a delay past 2^31 - 1 ms fires after 1 ms.
// Real PostgreSQL for the embedded log's lease and the consumer's dedup retention.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { ErrorCodes } from '../../src/errors.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { maxTimerMs, sleep } from '../../src/observability/sleep.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('embedded log: a lease of 2^32 ms and a dedup retention of 2^40 ms; records applied, leases and purge work', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10, leaseMs: 2 ** 32 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const producer = transport.producer();
  t.after(() => producer.close());
  await producer.send(
    [0, 1].map((n) => encodeEvent(createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n } }))),
  );
  const problems: string[] = [];
  const keep = (message: string, fields?: Record<string, unknown>) =>
    void problems.push(`${message} ${String(fields?.error ?? '')}`);
  const logger: Logger = { debug: () => undefined, info: () => undefined, warn: keep, error: keep };
  let applied = 0;
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger,
    retention: { keepMs: 2 ** 40, everyMs: 20 },
    handler: async () => {
      applied += 1;
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(
    async () => (await transport.admin().committedOffsets('g', 'orders'))[0]?.offset === '2',
    10_000,
    'both applied',
  );
  await sleep(100); // several purges
  assert.equal(applied, 2);
  const { rows } = await db.query<{ expires: boolean }>(
    `SELECT bool_and(expires_at > now() + interval '40 days') AS expires FROM ${schema}.log_leases`,
  );
  assert.equal(rows[0]?.expires, true);
  assert.deepEqual(problems, []);
});

test('sleep past the timer limit waits (in turns), it does not fire at once', async () => {
  const stop = new AbortController();
  let done = false;
  const waiting = sleep(maxTimerMs + 1000, stop.signal).then(() => {
    done = true;
  });
  await sleep(100);
  assert.equal(done, false);
  stop.abort();
  await waiting;
  assert.equal(done, true);
});

test('timers past the limit are refused at construction (a relay poll, an embedded-log heartbeat)', () => {
  assert.throws(() => createRelay({ db: undefined as never, pollIntervalMs: 2 ** 31 }), {
    code: ErrorCodes.EFF_INVALID_OPTIONS,
  });
  assert.throws(() => postgresTransport({ db: undefined as never, heartbeatMs: 2 ** 31, leaseMs: 2 ** 32 }), {
    code: ErrorCodes.EFF_INVALID_OPTIONS,
  });
});
