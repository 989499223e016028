// The relay survives what happens around it: the database dropping during a send (its prefetched read must not
// reject unhandled and take the application down), and a producer that failed fatally (replaced through the factory).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { listRefused } from '../../src/outbox/refused.ts';
import { createRelay, type RefusedEvent } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { OutgoingRecord, Producer } from '../../src/transport/port.ts';
import { eventually, freshSchema, freshTopic, outboxCount } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

const noop = () => undefined;

test('the database drops while a chunk is sent: the prefetched read rejects handled, the relay recovers', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db: direct, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 3);
  const outbox = createOutbox({ schema });
  await direct.transaction((tx) =>
    outbox.enqueue(
      tx,
      Array.from({ length: 20 }, (_, n) =>
        createEvent({ topic, type: 'x', source: '/t', key: `k${n % 3}`, data: { n } }),
      ),
    ),
  );
  const url = new URL(defaultDatabaseUrl());
  const proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const proxied = pgDb({ connectionString: url.toString(), max: 2 });
  t.after(async () => {
    await proxied.close().catch(() => undefined);
    await proxy.close().catch(() => undefined);
  });

  // The library's own Db port, passed through, noting each outbox read so the test knows when one has failed.
  const reads: Promise<unknown>[] = [];
  const db: Db = {
    query: (text, params) => proxied.query(text, params),
    transaction: (work) =>
      proxied.transaction((tx) =>
        work({
          query: <R extends Record<string, unknown>>(text: string, params?: unknown[]) => {
            if (!text.includes('encode(payload')) return tx.query<R>(text, params);
            const result = tx.query<R>(text, params);
            reads.push(result.then(noop, noop));
            // The relay gets a promise of its own: watching the read above must not count as handling it.
            return result.then((value) => value);
          },
        }),
      ),
    close: () => proxied.close(),
  };
  // The real producer; its first send waits, while the next chunk's read is in flight, until the database dropped
  // and that read failed: the moment a send outlives the database.
  const real = transport.producer();
  let cut: Promise<void> | undefined;
  const producer: Producer = {
    connect: () => real.connect(),
    close: () => real.close(),
    async send(records: readonly OutgoingRecord[]) {
      if (!cut) {
        cut = (async () => {
          const prefetch = reads.at(-1);
          await proxy.restart(300);
          await prefetch;
        })();
        await cut;
      }
      await real.send(records);
    },
  };

  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));

  const relay = createRelay({
    db,
    schema,
    producer,
    batchSize: 5,
    chunksPerPass: 4,
    errorBackoffMs: 100,
    listen: false,
    logger: silentLogger,
  });
  t.after(() => relay.close());
  await relay.start();
  await eventually(async () => (await outboxCount(direct, schema)) === 0, 30_000, 'every row published after the drop');
  assert.ok(cut, 'the database was cut during a send');
  assert.equal(reads.length > 1, true, 'a read was in flight during the send');
  assert.deepEqual(unhandled, [], 'no rejection went unhandled');
  const records = await readTopic(transport, topic, 20);
  assert.equal(new Set(records.map((record) => decodeEvent(record).id)).size, 20);
});

/** A topic whose limit refuses big records, and a transport whose producers treat any refusal as fatal (gapless). */
async function gaplessSetup(t: import('node:test').TestContext) {
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 100_000, prefix: 'gapless' });
  // enable.gapless.guarantee: a record refused for good raises librdkafka's fatal error; the producer then fails
  // every later send with ERR__FATAL (-150) until it is replaced. A real fatal error, on the real broker.
  const transport = kafkaTransport({ clientId: 'effectively-test', rdkafka: { 'enable.gapless.guarantee': true } });
  const outbox = createOutbox({ schema });
  const enqueue = (key: string, n: number, pad = 0) =>
    db.transaction((tx) =>
      outbox.enqueue(tx, createEvent({ topic, type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } })),
    );
  return { db, schema, topic, transport, enqueue };
}

test('a producer that failed fatally is replaced through producerFactory and the relay goes on', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema, topic, transport, enqueue } = await gaplessSetup(t);
  let made = 1;
  const refused: RefusedEvent[] = [];
  const relay = createRelay({
    db,
    schema,
    producer: transport.producer(),
    producerFactory: () => {
      made++;
      return transport.producer();
    },
    errorBackoffMs: 100,
    logger: silentLogger,
    onRefused: (row) => refused.push(row),
  });
  t.after(() => relay.close());
  await relay.start();
  await enqueue('big', 1, 300_000);
  await eventually(async () => refused.length === 1, 30_000, 'the big row set aside');
  // The producer is fatal now; rows enqueued afterwards still go out.
  for (let n = 2; n <= 6; n++) await enqueue(`k${n}`, n);
  await eventually(async () => (await outboxCount(db, schema)) === 0, 30_000, 'later rows published');
  assert.ok(made >= 2, `the fatal producer was replaced (${made} made)`);
  const records = await readTopic(transport, topic, 5);
  assert.deepEqual(
    [...new Set(records.map((record) => (decodeEvent(record).data as { n: number }).n))].sort(),
    [2, 3, 4, 5, 6],
  );
  assert.equal((await listRefused(db, { schema }))[0]?.key, 'big');
});

test('naive twin: with only a producer (no factory) the relay stays stuck after the fatal error', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema, transport, enqueue } = await gaplessSetup(t);
  const errors: string[] = [];
  const relay = createRelay({
    db,
    schema,
    producer: transport.producer(),
    errorBackoffMs: 50,
    logger: { ...silentLogger, error: (message) => errors.push(message) },
  });
  t.after(() => relay.close());
  await relay.start();
  await enqueue('big', 1, 300_000);
  await enqueue('small', 2);
  await eventually(async () => errors.some((line) => line.includes('no producerFactory')), 30_000, 'the fatal error');
  await eventually(async () => errors.filter((line) => line.includes('pass failed')).length >= 3, 30_000, '3 passes');
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox WHERE key = 'small'`);
  assert.equal(Number(rows[0]?.n), 1, 'the small row never goes out');
});
