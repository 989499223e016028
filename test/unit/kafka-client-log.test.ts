// The Kafka client's own log lines into the library's Logger, in virtual time: an injected clock, so the assertions
// count lines, never wall-clock durations. The child-process test (test/integration/kafka-client-log.test.ts) shows
// the real client uses it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EffectivelyError } from '../../src/errors.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { clientLogger } from '../../src/transport/kafka/log.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';

type Line = { level: string; message: string; fields: Record<string, unknown> | undefined };

function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

// What librdkafka logs once per client when its broker is gone (the text of a real line).
const refused = (ms: number, suppressed = 0) =>
  `[thrd:127.0.0.1:9092/1]: 127.0.0.1:9092/1: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after ${ms}ms in state CONNECT${suppressed ? `, ${suppressed} identical error(s) suppressed` : ''})`;

test('a message repeated during an outage is logged once per interval, then with the count it suppressed', () => {
  let time = 0;
  const { logger, lines } = capture();
  const client = clientLogger(logger, { level: 'warn', repeatIntervalMs: 30_000, now: () => time });
  for (let n = 0; n < 50; n++) {
    client.error(refused(n % 3, n % 2), { fac: 'FAIL', name: `rdkafka#producer-${n}` });
    time += 100;
  }
  assert.equal(lines.length, 1, 'one line for 50 repeats within the interval (timings and counts differ only)');
  assert.equal(lines[0]?.level, 'error');
  assert.deepEqual(lines[0]?.fields, { source: 'kafka-client', client: 'rdkafka#producer-0', facility: 'FAIL' });

  time += 30_000;
  client.error(refused(7), { fac: 'FAIL', name: 'rdkafka#producer-9' });
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.fields?.suppressed, 49, 'the next line says how many were dropped');

  client.error(refused(7), { fac: 'FAIL', name: 'rdkafka#producer-9' });
  assert.equal(lines.length, 2, 'and the interval starts again');
});

test('naive twin: with interval 0 every repeat is a line (the outage flood the limit prevents)', () => {
  const { logger, lines } = capture();
  const client = clientLogger(logger, { level: 'warn', repeatIntervalMs: 0, now: () => 0 });
  for (let n = 0; n < 50; n++) client.error(refused(0), { fac: 'FAIL' });
  assert.equal(lines.length, 50);
});

test('distinct messages are each logged; levels below the chosen one are dropped', () => {
  const { logger, lines } = capture();
  const client = clientLogger(logger, { level: 'warn', repeatIntervalMs: 30_000, now: () => 0 });
  client.error(refused(0), { fac: 'FAIL' });
  client.error('[thrd:127.0.0.1:9094/2]: 127.0.0.1:9094/2: Connect to ipv4#127.0.0.1:9094 failed', { fac: 'FAIL' });
  client.warn('Producer disconnected', { fac: 'BINDING', name: '' });
  client.info('Producer connected', { fac: 'BINDING' });
  client.debug('Attempting to fetch', { fac: 'BINDING' });
  assert.deepEqual(
    lines.map((line) => [line.level, line.message.slice(0, 30)]),
    [
      ['error', refused(0).slice(0, 30)],
      ['error', '[thrd:127.0.0.1:9094/2]: 127.0'],
      ['warn', 'Producer disconnected'],
    ],
  );
  assert.equal(lines[2]?.fields?.client, undefined, 'an empty client name is left out');

  // The client tells the logger the level it derived (a `log_level`/`debug` property in `rdkafka` wins).
  client.setLogLevel(4);
  client.debug('Attempting to fetch', { fac: 'BINDING' });
  assert.equal(lines.at(-1)?.level, 'debug');
});

test('invalid transport options are refused with EFF_INVALID_OPTIONS naming the field', () => {
  for (const [field, options] of [
    ['replicationFactor', { replicationFactor: 0 }],
    ['replicationFactor', { replicationFactor: 1.5 }],
    ['clientLogIntervalMs', { clientLogIntervalMs: -1 }],
    ['clientLogLevel', { clientLogLevel: 'loud' as 'warn' }],
  ] as const) {
    assert.throws(
      () => kafkaTransport(options),
      (error: unknown) =>
        error instanceof EffectivelyError && error.code === 'EFF_INVALID_OPTIONS' && error.details.field === field,
    );
  }
  assert.equal(kafkaTransport({ replicationFactor: -1 }).name, 'kafka');
});

test('a Logger that throws does not take the client down', () => {
  const throwing: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => {
      throw new Error('log sink down');
    },
  };
  const client = clientLogger(throwing, { level: 'warn', repeatIntervalMs: 0, now: () => 0 });
  assert.doesNotThrow(() => client.error(refused(0), { fac: 'FAIL' }));
});
