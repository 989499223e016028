// Every way a partition's assignment ends runs the same forgetting (issue 27, items 2 and 3): the consumer's
// per-partition memory (attempts, records given up on, "dead letters already looked up", a "stopped" mark) belongs to
// one assignment. On the embedded log a lost lease used to drop the partition without the revoke's forgetting, and a
// revoke used to keep the "stopped" mark. Real PostgreSQL, the postgres transport, real members of one group.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent, eventKeyOfRecord } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { type Logger, silentLogger } from '../../src/observability/logger.ts';
import type { Headers, Transport } from '../../src/transport/port.ts';
import { partitionOf } from '../../src/transport/postgres/codec.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const created = (topic: string, key: string, n: number) =>
  encodeEvent(createEvent({ topic, type: 't', source: '/end', key, data: { n } }));

async function send(transport: Transport, records: ReturnType<typeof created>[]): Promise<void> {
  const producer = transport.producer();
  await producer.send(records);
  await producer.close();
}

test('embedded log, a lost lease: a record given up on elsewhere meanwhile is passed over when the partition comes back', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const db = pgDb({ max: 4 });
  t.after(() => db.close());
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (message) => warnings.push(message) };
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, heartbeatMs: 100, leaseMs: 1000, logger });
  const topic = 'lost-lease';
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  await send(transport, [created(topic, 'k0', 0)]);
  const applied: number[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: [topic],
    schema,
    logger: silentLogger,
    handler: async (event) => {
      applied.push((event.data as { n: number }).n);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const committed = async () =>
    (
      await db.query<{ offset: string }>(
        `SELECT next_offset::text AS offset FROM ${schema}.log_offsets WHERE group_id = 'g' AND topic = $1`,
        [topic],
      )
    ).rows[0]?.offset;
  // The first batch looked the dead letters up (none) and committed.
  await eventually(async () => (await committed()) === '1', 30_000, 'record 0 committed');
  // Another member takes the lease for 3 s: this member drops the partition.
  await db.query(
    `UPDATE ${schema}.log_leases SET member_id = 'another', expires_at = now() + interval '3 seconds'
      WHERE group_id = 'g' AND topic = $1`,
    [topic],
  );
  await eventually(async () => warnings.some((w) => w.startsWith('lease lost')), 10_000, 'the lease lost');
  // Meanwhile the other member gives up on record 1 (its dead letter kept, its offset commit lost in a crash).
  const one = created(topic, 'k1', 1);
  await send(transport, [one, created(topic, 'k2', 2)]);
  const record = {
    topic,
    partition: 0,
    offset: '1',
    key: Buffer.from('k1'),
    value: one.value,
    headers: Object.fromEntries(
      Object.entries(one.headers).map(([name, value]) => [name, Buffer.from(value)]),
    ) as Headers,
    timestamp: Date.now(),
  };
  assert.ok(eventKeyOfRecord(record), 'the letter carries the dedup key');
  await deadLetterStore({ schema }).keep(db, {
    consumer: 'g',
    record,
    eventId: eventKeyOfRecord(record),
    error: new Error('given up on by another member'),
    attempts: 5,
    firstFailedAt: new Date(),
  });
  // The lease runs out; this member takes the partition back from the committed offset (1).
  await eventually(async () => applied.includes(2), 30_000, 'record 2 applied after the lease came back');
  await consumer.close();
  assert.deepEqual(applied, [0, 2], 'record 1, dead-lettered meanwhile, is passed over, not applied');
});

test('deadLetters: false, a partition stopped here, revoked and given back: its later failures are retried, never stuck', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const db = pgDb({ max: 8 });
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, heartbeatMs: 100, leaseMs: 1000 });
  const topic = 'stopped-back';
  await transport.admin().createTopics([{ topic, partitions: 2 }]);
  // Keys of partition 1: the partition the second member of the group is dealt.
  const keys = Array.from({ length: 200 }, (_, i) => `key-${i}`).filter((key) => partitionOf(key, 2) === 1);
  const applied = { a: new Set<number>(), b: new Set<number>() };
  const failedOnce = new Set<number>();
  const stops: string[] = [];
  const member = (name: 'a' | 'b') =>
    createConsumer({
      db,
      transport,
      group: 'g',
      topics: [topic],
      schema,
      logger: silentLogger,
      deadLetters: false,
      maxAttempts: 2,
      retry: { baseMs: 50, capMs: 100 },
      onStopped: (record) => stops.push(record.offset),
      handler: async (event) => {
        const { n } = event.data as { n: number };
        // Member a cannot apply record 0 (member b can); records from 1 on fail once each, wherever they run.
        if (name === 'a' && n === 0) throw new Error('member a cannot apply record 0');
        if (n > 0 && !failedOnce.has(n)) {
          failedOnce.add(n);
          throw new Error('a transient failure');
        }
        applied[name].add(n);
      },
    });
  const a = member('a');
  t.after(() => a.close());
  await a.start();
  await send(transport, [created(topic, keys[0]!, 0)]);
  await eventually(async () => stops.length === 1, 30_000, 'member a stopped partition 1');
  // Member b joins: partition 1 is revoked from a and dealt to b, which gets past record 0; then b leaves and
  // partition 1 comes back to a.
  const b = member('b');
  t.after(() => b.close());
  await b.start();
  await eventually(async () => applied.b.has(0), 30_000, 'member b applied record 0');
  await b.close();
  const later = Array.from({ length: 10 }, (_, i) => created(topic, keys[1 + i]!, 1 + i));
  await send(transport, later);
  await eventually(async () => applied.a.size === 10, 30_000, 'member a applied the 10 later records').catch(
    (error: unknown) => {
      throw new Error(`${(error as Error).message}; applied by a: ${[...applied.a].join(',') || 'none'}`);
    },
  );
  await a.close();
  assert.equal(stops.length, 1, 'stopped once');
});
