// A row the broker refuses costs its neighbours nothing: the relay keeps the records the broker acknowledged (the
// transport's per-record delivery reports) and sends again only the failed ones, so 300 rows and 1 refused put about
// 300 records on the topic, not 693 (issue 31). Both relays, the poller and the WAL reader (a private cluster with
// logical decoding), against the real broker; each with its naive twin, the old relay that took any failure as "nothing
// delivered" and bisected the whole chunk. And a refused row retried through the WAL relay is published once.
import assert from 'node:assert/strict';
import { after, before, type TestContext, test } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { loadSqlSet } from '../../src/db/sql.ts';
import { decodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { listRefused, retryRefused } from '../../src/outbox/refused.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Producer } from '../../src/transport/port.ts';
import { eventually, freshTopic } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';
import { type WalCluster, walCluster } from '../support/wal-cluster.ts';

let cluster: WalCluster | undefined;
before(async () => {
  cluster = await walCluster();
});
after(async () => {
  await cluster?.close();
});

const transport = kafkaTransport({ clientId: 'effectively-test' });

/** The old transport's answer to any failed delivery: "nothing delivered", no word on which record failed. */
function nothingDelivered(producer: Producer): Producer {
  return {
    connect: () => producer.connect(),
    close: () => producer.close(),
    send: (records) =>
      producer.send(records).catch((error: unknown) => {
        if (!(error instanceof EffectivelyError)) throw error;
        throw new EffectivelyError(error.code, error.message, {
          retryable: error.retryable,
          cause: error.cause,
          details: { delivered: 0 },
        });
      }),
  };
}

async function outboxRows(db: Db, schema: string): Promise<number> {
  return Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
}

async function topicTotal(topic: string): Promise<number> {
  const admin = transport.admin();
  const ends = await admin.endOffsets(topic);
  await admin.close();
  return ends.reduce((sum, end) => sum + Number(end.offset), 0);
}

async function slotReady(db: Db, schema: string): Promise<void> {
  await eventually(
    async () => (await db.query(`SELECT 1 FROM ${schema}.settings WHERE name LIKE 'wal.slot.%'`)).rows.length > 0,
    20_000,
    'the slot made',
  );
}

/**
 * 300 small rows of 300 keys and, in their middle, one of 150 KB (over the topic's 100 KB), in one transaction, on 3
 * partitions: the broker refuses the whole per-partition batch the big row is in. Returns the records on the topic
 * and how many copies of each of the 300 events it holds.
 */
async function oneRefused(t: TestContext, source: 'poll' | 'wal', naive: boolean) {
  const { db, schema } = await cluster!.schema();
  const topic = await smallTopic(t, { maxMessageBytes: 100_000, partitions: 3, prefix: 'copies' });
  const relay = createRelay({
    db,
    schema,
    source,
    wal: { connectionString: cluster!.url },
    producerFactory: () => (naive ? nothingDelivered(transport.producer()) : transport.producer()),
    logger: silentLogger,
    errorBackoffMs: 100,
  });
  t.after(() => relay.close());
  await relay.start();
  if (source === 'wal') await slotReady(db, schema);
  const event = (key: string, n: number, pad = 0) =>
    createEvent({ topic, type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } });
  const events = Array.from({ length: 300 }, (_, i) => event(`k${i}`, i));
  events.splice(150, 0, event('big', 1000, 150_000));
  await db.transaction((tx) => createOutbox({ schema }).enqueue(tx, events));
  await eventually(async () => (await listRefused(db, { schema })).length === 1, 60_000, 'the big row set aside');
  await eventually(async () => (await outboxRows(db, schema)) === 0, 60_000, 'the 300 others published');
  const total = await topicTotal(topic);
  const copies = new Map<string, number>();
  for (const record of await readTopic(transport, topic, total)) {
    const { key } = decodeEvent(record);
    copies.set(key, (copies.get(key) ?? 0) + 1);
  }
  const [refused] = await listRefused(db, { schema });
  return { total, copies, refused };
}

for (const source of ['poll', 'wal'] as const) {
  test(`${source}: 300 rows and 1 the broker refuses put at most 1.1 x 301 records on the topic, each row once`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const { total, copies, refused } = await oneRefused(t, source, false);
    t.diagnostic(`${source}: ${total} records on the topic for 300 rows published and 1 set aside`);
    assert.ok(total <= 1.1 * 301, `${total} records on the topic`);
    assert.equal(refused?.key, 'big');
    assert.equal(refused?.errorCode, 'ERR_MSG_SIZE_TOO_LARGE');
    assert.equal(copies.size, 300, 'every other row on the topic');
    const again = [...copies].filter(([, n]) => n !== 1);
    assert.deepEqual(again, [], 'every other row on the topic exactly once');
  });

  test(`${source} naive twin: "nothing delivered" on any failure bisects the chunk and sends acknowledged rows again`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const { total, copies, refused } = await oneRefused(t, source, true);
    t.diagnostic(`${source} naive: ${total} records on the topic for 300 rows published and 1 set aside`);
    assert.equal(refused?.key, 'big');
    assert.equal(copies.size, 300);
    assert.ok(total > 1.1 * 301, `${total} records on the topic`);
  });
}

/**
 * A row over the producer's limit is set aside by a WAL relay with a row of its key held behind it; then the limit is
 * raised and the row retried (`retryRefused`, or the old release when `naive`). Returns the copies of each of key
 * K's events on the topic, in the topic's order.
 */
async function retriedThroughWal(t: TestContext, naive: boolean): Promise<number[]> {
  const { db, schema } = await cluster!.schema();
  const { topic } = await freshTopic(t, 1);
  const small = kafkaTransport({ clientId: 'effectively-test', rdkafka: { 'message.max.bytes': 20_000 } });
  let fixed = false;
  const producer = (): Producer => {
    const before = small.producer();
    const now = transport.producer();
    return {
      connect: async () => {
        await before.connect();
        await now.connect();
      },
      send: (records) => (fixed ? now : before).send(records),
      close: async () => {
        await before.close();
        await now.close();
      },
    };
  };
  const relay = createRelay({
    db,
    schema,
    source: 'wal',
    wal: { connectionString: cluster!.url },
    producerFactory: producer,
    logger: silentLogger,
    errorBackoffMs: 100,
  });
  t.after(() => relay.close());
  await relay.start();
  await slotReady(db, schema);
  const event = (key: string, n: number, pad = 0) =>
    createEvent({ topic, type: 'x', source: '/t', key, data: { n, pad: 'x'.repeat(pad) } });
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, [event('K', 1), event('K', 2, 30_000), event('K', 3), event('L', 4)]),
  );
  await eventually(async () => (await listRefused(db, { schema })).length === 1, 20_000, 'K 2 set aside');
  await eventually(async () => (await outboxRows(db, schema)) === 1, 20_000, 'K 1 and L 4 published, K 3 held');
  fixed = true;
  if (naive) await oldRetry(db, schema);
  else assert.equal(await retryRefused(db, { schema }), 1);
  await eventually(async () => (await outboxRows(db, schema)) === 0, 20_000, 'K 2 and K 3 published');
  await createOutbox({ schema }).enqueue(db, [event('end', 5)]);
  await eventually(async () => (await outboxRows(db, schema)) === 0, 20_000, 'the marker published');
  const records = await readTopic(transport, topic, await topicTotal(topic));
  return records
    .map((record) => decodeEvent(record))
    .filter((decoded) => decoded.key === 'K')
    .map((decoded) => (decoded.data as { n: number }).n);
}

/** The release as it was: the row put back, then every row of its key (the row put back too) written again. */
async function oldRetry(db: Db, schema: string): Promise<void> {
  const sql = loadSqlSet(
    new URL('../../src/outbox/refused.ts', import.meta.url).href,
    { retry: 'refused-retry.sql', restream: 'refused-restream.sql' },
    schema,
  );
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ seq: string }>(sql.retry, [
      (await tx.query<{ seq: string }>(`SELECT seq FROM ${schema}.outbox_refused`)).rows.map((row) => row.seq),
    ]);
    assert.equal(rows.length, 1);
    await tx.query(sql.restream, [['K'], []]);
  });
}

test('wal: a refused row retried is published once, before the row of its key held behind it', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  assert.deepEqual(await retriedThroughWal(t, false), [1, 2, 3]);
});

test('wal naive twin: the old release wrote the retried row twice, and the WAL relay published it twice', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  assert.deepEqual(await retriedThroughWal(t, true), [1, 2, 2, 3]);
});
