// Topic versioning, the whole migration of `order-events` → `order-events.v2` through the outbox and the relay:
// v1-only (a consumer reads v1) → dual-write (each enqueue writes both topics, same event id, in one transaction; the
// consumer is closed in the middle and a new instance of the same group reads v1 and v2) → v2-only (nothing more is
// written to v1; the group drops v1). Every event is applied exactly once, in the v2 shape. The naive twin (one group
// per topic: no dedup across topics) applies every dual-written event twice.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createConsumer, type EffectivelyConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import {
  declareTopicVersion,
  enqueueVersioned,
  expandForVersions,
  type TopicPhase,
  upcastOnRead,
} from '../../src/schema/versioning/index.ts';
import type { Admin, Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

interface V1 {
  orderId: string;
  total: number;
}
interface V2 {
  orderId: string;
  amount: { cents: number; currency: string };
}
const v2Type = 'boxoffice.order.confirmed.v2';

/** The incompatible change: `total` (cents) becomes `amount: { cents, currency }`. */
const upcast = (event: Event<V1>) => ({
  type: v2Type,
  data: { orderId: event.data.orderId, amount: { cents: event.data.total, currency: 'BRL' } } satisfies V2,
});

interface Walk {
  db: Db;
  schema: string;
  transport: Transport;
  v1: string;
  v2: string;
  /** The consumer group that reads `topic`: one for all topics (effectively), or one per topic (the naive twin). */
  groupFor: (topic: string) => string;
}

interface WalkResult {
  written: Event[];
  /** Event ids written in the dual-write phase (on both topics). */
  dualWritten: Set<string>;
  /** Times each event id was applied (by any of the groups). */
  applied: Map<string, number>;
  effects: { id: string; readFrom: string; topic: string; type: string; data: V2 }[];
  /** Events the groups recognised as already applied (their dedup row existed). */
  duplicates: number;
}

async function walkMigration(t: TestContext, walk: Walk): Promise<WalkResult> {
  const { db, schema, transport, v1, v2, groupFor } = walk;
  await db.query(
    `CREATE TABLE ${schema}.tv_effects (event_id uuid NOT NULL, read_from text NOT NULL, topic text NOT NULL,
       type text NOT NULL, data jsonb NOT NULL)`,
  );
  const versions = (phase: TopicPhase) => [declareTopicVersion({ from: v1, to: v2, upcast, phase })];
  const outbox = createOutbox({ schema, notify: false });
  const relay = createRelay({ db, producer: transport.producer(), schema, logger: silentLogger });
  const admin: Admin = transport.admin();
  t.after(async () => {
    await relay.close();
    await admin.close();
  });

  // The service: one handler written for the v2 shape; events read from v1 are up-cast on read.
  const handler = upcastOnRead(versions('v1-only'), async (event, { tx, record }) => {
    await tx.query(
      `INSERT INTO ${schema}.tv_effects (event_id, read_from, topic, type, data) VALUES ($1, $2, $3, $4, $5)`,
      [event.id, record.topic, event.topic, event.type, JSON.stringify(event.data)],
    );
  });
  let duplicates = 0;
  const onOutcome = (_event: Event, outcome: string) => {
    if (outcome === 'duplicate') duplicates += 1;
  };
  let readers: { consumer: EffectivelyConsumer; group: string; topics: string[] }[] = [];
  async function startReaders(topics: string[]) {
    const byGroup = new Map<string, string[]>();
    for (const topic of topics) byGroup.set(groupFor(topic), [...(byGroup.get(groupFor(topic)) ?? []), topic]);
    readers = [...byGroup].map(([group, groupTopics]) => ({
      group,
      topics: groupTopics,
      consumer: createConsumer({
        db,
        transport,
        group,
        topics: groupTopics,
        schema,
        logger: silentLogger,
        handler,
        onOutcome,
      }),
    }));
    await Promise.all(readers.map((reader) => reader.consumer.start()));
  }
  async function stopReaders() {
    await Promise.all(readers.map((reader) => reader.consumer.close()));
    readers = [];
  }
  t.after(stopReaders);
  /** Every running group has committed everything on each of its topics (so every duplicate has been met). */
  async function caughtUp(): Promise<boolean> {
    for (const { group, topics } of readers) {
      for (const topic of topics) {
        const committed = new Map(
          (await admin.committedOffsets(group, topic)).map((p) => [p.partition, BigInt(p.offset)]),
        );
        for (const end of await admin.endOffsets(topic)) {
          if ((committed.get(end.partition) ?? -1n) < BigInt(end.offset)) return false;
        }
      }
    }
    return true;
  }
  const appliedIds = async () =>
    Number(
      (await db.query<{ n: string }>(`SELECT count(DISTINCT event_id) AS n FROM ${schema}.tv_effects`)).rows[0]!.n,
    );
  const outboxRows = async () =>
    (
      await db.query<{ id: string; topic: string; key: string; headers: Record<string, string>; payload: Uint8Array }>(
        `SELECT id::text AS id, topic, key, headers, payload FROM ${schema}.outbox ORDER BY seq`,
      )
    ).rows;
  const endSum = async (topic: string) =>
    (await admin.endOffsets(topic)).reduce((sum, p) => sum + BigInt(p.offset), 0n);

  const written: Event[] = [];
  const dualWritten = new Set<string>();
  let orderNo = 0;
  /** The order service: `count` orders in transactions of 5, each enqueueing its event with the versions in force. */
  async function write(phase: TopicPhase, count: number) {
    for (let done = 0; done < count; done += 5) {
      const events = Array.from({ length: Math.min(5, count - done) }, () => {
        orderNo += 1;
        const orderId = `order-${orderNo}`;
        return createEvent<V1>({
          topic: v1,
          type: 'boxoffice.order.confirmed',
          source: '/boxoffice/orders',
          key: orderId,
          data: { orderId, total: orderNo * 100 },
        });
      });
      await db.transaction((tx) => enqueueVersioned(outbox, tx, events, versions(phase)));
      written.push(...events);
      if (phase === 'dual-write') for (const event of events) dualWritten.add(event.id);
    }
  }

  // Phase v1-only: events go to v1 only; consumer A reads v1.
  await write('v1-only', 20);
  assert.deepEqual(new Set((await outboxRows()).map((row) => row.topic)), new Set([v1]));
  await relay.drain();
  await startReaders([v1]);
  await eventually(async () => (await appliedIds()) === 20, 60_000, 'v1-only events applied');

  // Phase dual-write: each enqueue writes both topics in its transaction, the same id twice, v2 up-cast.
  await write('dual-write', 20);
  const rows = await outboxRows();
  assert.equal(rows.length, 40);
  for (const event of written.slice(20)) {
    const [old, next] = [v1, v2].map((topic) => rows.find((row) => row.id === event.id && row.topic === topic));
    assert.ok(old && next, `${event.id} is in the outbox for both topics`);
    assert.equal(next.headers.ce_id, event.id);
    assert.equal(next.headers.ce_type, v2Type);
    assert.equal(next.key, event.key);
    assert.deepEqual(JSON.parse(Buffer.from(next.payload).toString('utf8')), upcast(event as Event<V1>).data);
    assert.deepEqual(JSON.parse(Buffer.from(old.payload).toString('utf8')), event.data);
  }
  await relay.drain();
  // A still reads v1 only: it applies the dual-written events from v1; their twins wait in v2.
  await eventually(async () => (await appliedIds()) === 40, 60_000, 'dual-written events applied from v1');
  await write('dual-write', 20);
  await relay.drain();
  // The restart in the middle: A is closed with these last events applied in part, or not at all, and a new instance
  // of the same group reads v2 (from its beginning: every dual-written event again) and the rest of v1.
  await stopReaders();
  await startReaders([v1, v2]);
  await write('dual-write', 20);
  await relay.drain();
  await eventually(async () => (await appliedIds()) === 80 && (await caughtUp()), 60_000, 'both topics read');

  // Phase v2-only: v1 is retired; nothing more is written to it.
  const v1End = await endSum(v1);
  await write('v2-only', 20);
  assert.deepEqual(new Set((await outboxRows()).map((row) => row.topic)), new Set([v2]));
  await relay.drain();
  assert.equal(await endSum(v1), v1End, 'no record written to the retired topic');
  await eventually(async () => (await appliedIds()) === 100 && (await caughtUp()), 60_000, 'v2-only events applied');
  // The group drops v1 (read to its end above): a second restart, on v2 only.
  await stopReaders();
  await startReaders([v2]);
  await write('v2-only', 10);
  await relay.drain();
  await eventually(async () => (await appliedIds()) === 110 && (await caughtUp()), 60_000, 'last events applied');
  await stopReaders();

  const { rows: effects } = await db.query<{ id: string; read_from: string; topic: string; type: string; data: V2 }>(
    `SELECT event_id::text AS id, read_from, topic, type, data FROM ${schema}.tv_effects`,
  );
  const applied = new Map<string, number>();
  for (const effect of effects) applied.set(effect.id, (applied.get(effect.id) ?? 0) + 1);
  return {
    written,
    dualWritten,
    applied,
    effects: effects.map((e) => ({ id: e.id, readFrom: e.read_from, topic: e.topic, type: e.type, data: e.data })),
    duplicates,
  };
}

/** Nothing lost, nothing applied twice, every effect in the v2 shape, some read from each topic. */
function assertEffectivelyOnce(result: WalkResult, v1: string, v2: string) {
  assert.equal(result.written.length, 110);
  assert.equal(result.dualWritten.size, 60);
  const missing = result.written.filter((event) => !result.applied.has(event.id));
  const twice = [...result.applied].filter(([, times]) => times > 1);
  assert.deepEqual(missing, [], 'no event lost');
  assert.deepEqual(twice, [], 'no event applied twice');
  assert.equal(result.applied.size, 110);
  for (const effect of result.effects) {
    assert.equal(effect.topic, v2);
    assert.equal(effect.type, v2Type);
    assert.equal(typeof effect.data.amount.cents, 'number');
    assert.equal('total' in effect.data, false);
  }
  const readFrom = new Set(result.effects.map((effect) => effect.readFrom));
  assert.deepEqual(readFrom, new Set([v1, v2]), 'events were applied from both topics');
  // Each dual-written event reached the group twice (once per topic): the second was absorbed by its dedup row.
  assert.ok(result.duplicates >= 60, `the group absorbed the dual-written twins (${result.duplicates} duplicates)`);
}

async function embedded(t: TestContext, schema: string) {
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([
    { topic: 'order-events', partitions: 3 },
    { topic: 'order-events.v2', partitions: 3 },
  ]);
  return { db, transport, v1: 'order-events', v2: 'order-events.v2' };
}

test('expandForVersions: one event per phase becomes v1, v1 + v2 (same id), or v2; straight-to-v2 is refused early', () => {
  const event = createEvent<V1>({
    topic: 'order-events',
    type: 'boxoffice.order.confirmed',
    source: '/o',
    key: 'order-1',
    version: 2,
    data: { orderId: 'order-1', total: 500 },
    headers: { traceparent: 't' },
  });
  const at = (phase: TopicPhase) => [
    declareTopicVersion({ from: 'order-events', to: 'order-events.v2', upcast, phase }),
  ];
  const v2Event = { ...event, topic: 'order-events.v2', type: v2Type, data: upcast(event).data };
  assert.deepEqual(expandForVersions(event, at('v1-only')), [event]);
  assert.deepEqual(expandForVersions(event, at('dual-write')), [event, v2Event]);
  assert.deepEqual(expandForVersions(event, at('v2-only')), [v2Event]);
  assert.deepEqual(expandForVersions(v2Event, at('v2-only')), [v2Event]);
  for (const phase of ['v1-only', 'dual-write'] as const) {
    assert.throws(() => expandForVersions(v2Event, at(phase)), { code: 'EFF_INVALID_EVENT' });
  }
  // Chains: v1 → v2 retired, v2 → v3 in dual-write.
  const v3 = declareTopicVersion<V2, V2>({
    from: 'order-events.v2',
    to: 'order-events.v3',
    upcast: (e) => ({ data: e.data }),
    phase: 'dual-write',
  });
  assert.deepEqual(
    expandForVersions(event, [...at('v2-only'), v3]).map((e) => [e.topic, e.id]),
    [
      ['order-events.v2', event.id],
      ['order-events.v3', event.id],
    ],
  );
  assert.throws(() => declareTopicVersion({ from: 'a', to: 'a', upcast }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => declareTopicVersion({ from: 'a', to: 'b', upcast, phase: 'both' as never }), {
    code: 'EFF_INVALID_OPTIONS',
  });
  const loop = [
    declareTopicVersion({ from: 'a', to: 'b', upcast }),
    declareTopicVersion({ from: 'b', to: 'a', upcast }),
  ];
  assert.throws(() => expandForVersions(event, loop), { code: 'EFF_INVALID_OPTIONS' });
});

test('embedded: the whole migration with a restart in the middle applies every event exactly once', async (t) => {
  const { db, transport, v1, v2 } = await embedded(t, 'versioning');
  const result = await walkMigration(t, { db, schema: 'versioning', transport, v1, v2, groupFor: () => 'notifier' });
  assertEffectivelyOnce(result, v1, v2);
});

test('naive twin: one consumer group per topic does not dedup across topics: dual-written events apply twice', async (t) => {
  const { db, transport, v1, v2 } = await embedded(t, 'versioning_naive');
  const result = await walkMigration(t, {
    db,
    schema: 'versioning_naive',
    transport,
    v1,
    v2,
    groupFor: (topic) => `notifier-${topic}`,
  });
  const twice = new Set([...result.applied].filter(([, times]) => times > 1).map(([id]) => id));
  assert.deepEqual(twice, result.dualWritten, 'exactly the dual-written events were applied twice');
  assert.equal([...result.applied.values()].filter((times) => times > 2).length, 0);
  assert.equal(result.written.filter((event) => !result.applied.has(event.id)).length, 0);
  assert.equal(result.duplicates, 0, 'no group saw an event twice: nothing absorbed the twins');
});

test('kafka: the whole migration with a restart in the middle applies every event exactly once', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic: v1 } = await freshTopic(t, 3);
  const { topic: v2 } = await freshTopic(t, 3);
  const group = randomName('notifier');
  const result = await walkMigration(t, { db, schema, transport, v1, v2, groupFor: () => group });
  assertEffectivelyOnce(result, v1, v2);
});
