// The Prometheus text: checked line by line against the exposition format's rules (HELP and TYPE once per family,
// before its samples, which stay together; names and label names in their alphabets; label values escaped), with a
// hostile consumer group name; and the numbers read from the real PostgreSQL and the log in it, served on node:http.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { metricsHandler, prometheusMetrics } from '../../src/observability/prometheus.ts';
import { escapeLabelValue, renderPrometheus } from '../../src/observability/prometheus-text.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { sendKeyed } from '../support/embedded-log.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';

interface Parsed {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const unescapeLabel = (value: string) => value.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));

/** Parses an exposition, failing on any line the text format (0.0.4) does not allow. */
function parseExposition(text: string): { samples: Parsed[]; types: Map<string, string> } {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const closed = new Set<string>();
  const samples: Parsed[] = [];
  let current: string | undefined;
  const family = (name: string) => {
    if (name !== current) {
      assert.ok(!closed.has(name), `the samples of ${name} are not together`);
      if (current) closed.add(current);
      current = name;
    }
  };
  for (const line of text.slice(0, -1).split('\n')) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      family(name);
      if (kind === 'HELP') {
        assert.ok(!helped.has(name), `one HELP for ${name}`);
        assert.match(rest, /^(?:[^\\]|\\[\\n])*$/, `HELP of ${name} escaped`);
        helped.add(name);
      } else {
        assert.ok(!types.has(name), `one TYPE for ${name}`);
        assert.match(rest, /^(counter|gauge|histogram|summary|untyped)$/);
        assert.equal(samples.filter((s) => s.name === name).length, 0, `TYPE of ${name} before its samples`);
        types.set(name, rest);
      }
      continue;
    }
    const sample =
      /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*)\})? (\S+)$/.exec(line);
    assert.ok(sample, `a valid sample line: ${JSON.stringify(line)}`);
    const [, name, body = '', value] = sample as unknown as [string, string, string | undefined, string];
    family(name);
    const labels: Record<string, string> = {};
    for (const pair of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\["\\n])*)"/g)) {
      labels[pair[1]!] = unescapeLabel(pair[2]!);
    }
    assert.ok(/^(NaN|[+-]Inf|-?\d+(\.\d+)?(e[+-]?\d+)?)$/.test(value), `value ${value}`);
    if (types.get(name) === 'counter') assert.match(name, /_total$/);
    samples.push({ name, labels, value: Number(value) });
  }
  return { samples, types };
}

const hostile = 'ops "blue"} 1\nfake_metric{x="y"} 9\\';

test('label values are escaped: a hostile value stays one label of one sample', () => {
  assert.equal(escapeLabelValue('a"b\nc\\d'), 'a\\"b\\nc\\\\d');
  assert.equal(escapeLabelValue('lone \ud800 surrogate'), 'lone \ufffd surrogate');
  const text = renderPrometheus([
    {
      name: 'x_total',
      help: 'two\nlines \\ here',
      type: 'counter',
      samples: [{ labels: { group: hostile }, value: 2 }],
    },
  ]);
  const { samples } = parseExposition(text);
  assert.deepEqual(samples, [{ name: 'x_total', labels: { group: hostile }, value: 2 }]);
  assert.ok(!text.includes('\nfake_metric'), 'no forged sample line');
  assert.throws(() => renderPrometheus([{ name: 'bad-name', help: '', type: 'gauge', samples: [] }]), {
    code: 'EFF_INVALID_OPTIONS',
  });
});

test('the naive twin: label values written as they are fail the format check', () => {
  const naive = `# HELP x_total x\n# TYPE x_total counter\nx_total{group="${hostile}"} 2\n`;
  assert.throws(() => parseExposition(naive), assert.AssertionError);
});

async function scrape(url: string) {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await response.text()).samples;
}

const value = (samples: Parsed[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

async function serve(t: TestContext, handler: ReturnType<typeof metricsHandler>): Promise<string> {
  const server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
}

test('the numbers from the database and the log, served on node:http, with a hostile group name', async (t) => {
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10, logger: silentLogger });
  const topic = 'otel-prom';
  await sendKeyed(transport, topic, ['a', 'b', 'c']);
  const outbox = createOutbox({ schema, notify: false });
  const event = (key: string) => createEvent({ topic, type: 't', source: '/t', key, data: {} });
  await db.transaction((tx) => outbox.enqueue(tx, [event('x'), event('y')]));
  await db.query(`UPDATE ${schema}.outbox SET created_at = now() - interval '90 seconds' WHERE key = 'x'`);
  const letter = `INSERT INTO ${schema}.dead_letters (consumer, topic, partition, "offset", code, reason, attempts,
      first_failed_at, last_failed_at, status) VALUES ('g', $1, 0, $2, 'E', 'r', 1, now(), now() - $3::interval, $4)`;
  for (const [offset, age, status] of [
    [1, '1 hour', 'dead'],
    [2, '1 minute', 'dead'],
    [3, '0 s', 'redriven'],
    [4, '0 s', 'discarded'],
  ] as const) {
    await db.query(letter, [topic, offset, age, status]);
  }
  const url = await serve(
    t,
    metricsHandler(db, { schema, lag: { source: transport, groups: [{ group: hostile, topics: [topic] }] } }),
  );
  const before = await scrape(url);
  assert.equal(value(before, 'effectively_dead_letters'), 2);
  const oldest = value(before, 'effectively_dead_letter_oldest_age_seconds')!;
  assert.ok(oldest >= 3600 && oldest < 3700, `oldest dead letter ${oldest}`);
  assert.equal(value(before, 'effectively_redriven_messages_total', { outcome: 'redriven' }), 1);
  assert.equal(value(before, 'effectively_redriven_messages_total', { outcome: 'discarded' }), 1);
  assert.equal(value(before, 'effectively_outbox_pending_messages'), 2);
  const pendingAge = value(before, 'effectively_outbox_oldest_pending_age_seconds')!;
  assert.ok(pendingAge >= 90 && pendingAge < 200, `oldest pending ${pendingAge}`);
  const lag = { group: hostile, topic, partition: '0' };
  assert.equal(value(before, 'effectively_consumer_lag', lag), 3);

  const applied: string[] = [];
  const consumer = createConsumer({
    db,
    transport,
    schema,
    group: hostile,
    topics: [topic],
    logger: silentLogger,
    handler: async (e) => void applied.push(e.key),
  });
  await consumer.start();
  await eventually(async () => applied.length === 3);
  await consumer.close();
  const after = parseExposition(
    await prometheusMetrics(db, { schema, lag: { source: transport, groups: [{ group: hostile, topics: [topic] }] } }),
  ).samples;
  assert.equal(value(after, 'effectively_consumer_lag', lag), 0);
  assert.equal(value(after, 'effectively_dedup_outcomes_total', { group: hostile, outcome: 'applied' }), 3);

  // A schema never migrated: 503 with the code that says what to do, never a half-written page.
  const unmigrated = await serve(t, metricsHandler(db, { schema: `${schema}_none`, logger: silentLogger }));
  const refused = await fetch(unmigrated);
  assert.equal(refused.status, 503);
  assert.match(await refused.text(), /EFF_NOT_MIGRATED/);
});
