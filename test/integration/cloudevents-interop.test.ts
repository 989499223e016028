// Interop with the official CloudEvents JavaScript SDK (`cloudevents`, its Kafka binding) on the real broker, both ways
// and in both content modes: our events are parsed and validated by the SDK; the SDK's events — UUID ids, string ids,
// the same id from two sources — are applied once each, their copies are duplicates, nothing is dead-lettered. An event
// applied by an earlier version (a UUID id, its own dedup key) stays a duplicate after the upgrade. A string id goes
// around the retry-topic chain, into dead_letters and back through redrive with its identity.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { CloudEvent, Kafka, type KafkaMessage } from 'cloudevents';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Outcome } from '../../src/consumer/types.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEventAs } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { dedupKey, eventIdentityNamespace, uuidv5 } from '../../src/envelope/identity.ts';
import { TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { IncomingRecord, OutgoingRecord, Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

type Mode = 'binary' | 'structured';

/** A record as the SDK's Kafka binding reads it (KafkaJS hands header values over as strings). */
function toSdkMessage(record: IncomingRecord): KafkaMessage<string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers)) headers[name] = value.toString('utf8');
  const value = record.value?.toString('utf8') ?? '';
  return { key: record.key?.toString('utf8') ?? '', value, body: value, headers };
}

/** An SDK event written with the SDK's binding in `mode`, as a KafkaJS producer would send it (JSON data as bytes). */
function fromSdk(topic: string, event: CloudEvent<unknown>, mode: Mode): OutgoingRecord {
  const message = mode === 'binary' ? Kafka.binary(event) : Kafka.structured(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) if (value !== undefined) headers[name] = String(value);
  const value = typeof message.value === 'string' ? message.value : JSON.stringify(message.value);
  return { topic, key: String(message.key), value: Buffer.from(value), headers };
}

/** A consumer on `topic` that remembers every event it applied and every outcome. */
function recordingConsumer(
  t: TestContext,
  db: Db,
  schema: string,
  transport: Transport,
  topic: string,
  handler: (event: Event, topic: string) => void = () => undefined,
  retryTopics?: { delaysMs: number[] },
) {
  const applied: Event[] = [];
  const outcomes: [string, Outcome][] = [];
  const dead: IncomingRecord[] = [];
  const group = randomName('g');
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    logger: silentLogger,
    ...(retryTopics ? { retryTopics } : {}),
    handler: async (event, { record }) => {
      handler(event, record.topic);
      applied.push(event);
    },
    onOutcome: (event, outcome) => outcomes.push([`${event.source} ${event.id}`, outcome]),
    onDeadLetter: (letter) => dead.push(letter.record),
  });
  t.after(() => consumer.close());
  const count = (outcome: Outcome) => outcomes.filter(([, o]) => o === outcome).length;
  return { consumer, group, applied, outcomes, dead, count };
}

test('kafka: our events, binary and structured, are parsed and validated by the CloudEvents SDK', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { transport, topic } = await freshTopic(t, 1);
  const event = createEvent({
    topic,
    type: 'boxoffice.order.confirmed',
    source: '/boxoffice/orders',
    key: 'order-7',
    version: 3,
    data: { order: 7, seats: ['A1', 'A2'] },
    headers: { ce_subject: 'order-7', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  });
  const producer = transport.producer();
  t.after(() => producer.close());
  await producer.send([encodeEventAs(event, 'binary'), encodeEventAs(event, 'structured')]);
  const records = await readTopic(transport, topic, 2);
  for (const [index, mode] of (['binary', 'structured'] as const).entries()) {
    const parsed = Kafka.toEvent(toSdkMessage(records[index]!)) as CloudEvent<unknown>;
    assert.equal(parsed.validate(), true, `${mode}: valid for the SDK`);
    assert.deepEqual(
      [parsed.specversion, parsed.id, parsed.type, parsed.source, parsed.time, parsed.subject, parsed.partitionkey],
      ['1.0', event.id, event.type, event.source, event.time, 'order-7', 'order-7'],
      mode,
    );
    assert.deepEqual(parsed.data, event.data, mode);
    // A header is text: the binary mode carries the integer extension in its string form, the JSON format as a number.
    assert.equal(String(parsed.version), '3', `${mode}: the version extension`);
    console.log(`interop: ${mode} event ${parsed.id} from ${parsed.source} parsed and validated by the SDK`);
  }
});

/** SDK events of every kind of id, in both modes, sent twice: applied once each, the copies duplicates. */
async function sdkEventsAppliedOnce(t: TestContext, db: Db, schema: string, transport: Transport, topic: string) {
  const sdk = (source: string, id?: string) =>
    new CloudEvent<unknown>({
      source,
      type: 'invoice.issued',
      ...(id === undefined ? {} : { id }),
      datacontenttype: 'application/json',
      partitionkey: `${source}:${id ?? 'uuid'}`,
      data: { source, id: id ?? null },
    });
  const sent: [CloudEvent<unknown>, Mode][] = [
    [sdk('/billing'), 'binary'], // the SDK's default id: a UUID v4
    [sdk('/billing', 'order-2026-000123'), 'binary'],
    [sdk('/billing', '42'), 'binary'],
    [sdk('/shipping', '42'), 'binary'], // the same id from another source: another event
    [sdk('/billing'), 'structured'],
    [sdk('/billing', 'evt_01HXZ9'), 'structured'],
    [sdk('/billing', '43'), 'structured'],
    [sdk('/shipping', '43'), 'structured'],
  ];
  const records = sent.map(([event, mode]) => fromSdk(topic, event, mode));
  const { consumer, group, applied, outcomes, dead, count } = recordingConsumer(t, db, schema, transport, topic);
  const producer = transport.producer();
  t.after(() => producer.close());
  await consumer.start();
  await producer.send(records);
  await eventually(async () => applied.length + dead.length >= 8, 30_000, 'the 8 SDK events settled');
  assert.deepEqual(await deadLetterStore({ schema }).list(db), [], 'nothing dead-lettered');
  // A redelivery of each (the same records again, as a producer retry or a replay would send them).
  await producer.send(records);
  await eventually(async () => count('duplicate') >= 8, 30_000, 'the 8 copies seen as duplicates');
  const identity = (source: string, id: string) => `${source} ${id}`;
  assert.deepEqual(
    applied.map((event) => identity(event.source, event.id)).sort(),
    sent.map(([event]) => identity(event.source, event.id)).sort(),
    'each applied once, with its own id and source',
  );
  assert.equal(count('applied'), 8);
  assert.equal(new Set(applied.map((e) => identity(e.source, e.id))).size, 8);
  for (const event of applied) assert.equal((event.data as { source: string }).source, event.source, 'its own data');
  assert.deepEqual(await deadLetterStore({ schema }).list(db), [], 'nothing dead-lettered');
  const { rows } = await db.query<{ event_id: string }>(
    `SELECT event_id::text AS event_id FROM ${schema}.processed_events WHERE consumer = $1`,
    [group],
  );
  assert.deepEqual(
    rows.map((row) => row.event_id).sort(),
    sent.map(([event]) => dedupKey(event.source, event.id)).sort(),
    'dedup keys: a UUID id itself, any other id a UUIDv5 over source + id',
  );
  for (const [key, outcome] of outcomes) console.log(`interop: ${outcome.padEnd(9)} ${key}`);
}

test('kafka: SDK events (UUID ids, string ids, one id from two sources) are applied once each, copies are duplicates', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 2);
  await sdkEventsAppliedOnce(t, db, schema, transport, topic);
});

test('embedded: SDK events (UUID ids, string ids, one id from two sources) are applied once each, copies are duplicates', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'interop';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([{ topic: 'invoices', partitions: 2 }]);
  await sdkEventsAppliedOnce(t, db, schema, transport, 'invoices');
});

test('kafka: an event applied by an earlier version (UUID id, its own key) is a duplicate after the upgrade', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const ours = createEvent({ topic, type: 'order.placed', source: '/shop', key: 'k1', data: { n: 1 } });
  const theirs = new CloudEvent<unknown>({
    id: '0193A1B2-C3D4-4E5F-8A9B-0C1D2E3F4A5B', // upper case: the earlier version lowercased ids before claiming
    source: '/billing',
    type: 'invoice.issued',
    datacontenttype: 'application/json',
    partitionkey: 'k2',
    data: { n: 2 },
  });
  const fresh = createEvent({ topic, type: 'order.placed', source: '/shop', key: 'k3', data: { n: 3 } });
  const { consumer, group, applied, count } = recordingConsumer(t, db, schema, transport, topic);
  // What the earlier version's claim wrote when it applied the two (dedup.sql with `event.id`, lowercased).
  for (const id of [ours.id, theirs.id.toLowerCase()]) {
    await db.query(`INSERT INTO ${schema}.processed_events (consumer, event_id) VALUES ($1, $2)`, [group, id]);
  }
  // Naive twin: keyed by source + id for every id (the spec's identity, ignoring the installed rows), neither row is
  // found, so both events would be claimed fresh and applied a second time.
  const spec = (source: string, id: string) =>
    uuidv5(eventIdentityNamespace, `${Buffer.byteLength(source)}:${source}${id.toLowerCase()}`);
  const naive = [spec(ours.source, ours.id), spec(theirs.source, theirs.id)];
  const found = await db.query(
    `SELECT 1 FROM ${schema}.processed_events WHERE consumer = $1 AND event_id = ANY($2::uuid[])`,
    [group, naive],
  );
  assert.equal(found.rowCount, 0, 'a key over source + id for UUIDs misses what earlier versions claimed');
  const producer = transport.producer();
  t.after(() => producer.close());
  await consumer.start();
  await producer.send([
    encodeEventAs(ours, 'binary'),
    fromSdk(topic, theirs, 'structured'),
    encodeEventAs(fresh, 'binary'),
  ]);
  // One partition: once the fresh event behind them is applied, the two before it were settled.
  await eventually(async () => applied.length === 1, 30_000, 'the fresh event applied');
  assert.deepEqual(
    applied.map((e) => e.id),
    [fresh.id],
  );
  assert.equal(count('duplicate'), 2, 'the events applied before the upgrade are duplicates');
  console.log(
    `interop: upgrade: ${count('duplicate')} events applied before the upgrade seen as duplicates, 1 fresh applied`,
  );
});

test('kafka: a string id goes around the retry topics into dead letters and back through redrive, keeping its identity', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 2);
  t.after(async () => {
    const admin = transport.admin();
    await admin.deleteTopics([`${topic}-retry-1`, `${topic}-retry-2`, `${topic}-dlt`]).catch(() => undefined);
    await admin.close();
  });
  const sdk = (source: string, id: string) =>
    new CloudEvent<unknown>({
      source,
      id,
      type: 'invoice.issued',
      datacontenttype: 'application/json',
      partitionkey: id,
      data: { id },
    });
  const broken: [CloudEvent<unknown>, Mode][] = [
    [sdk('/billing', 'order-2026-000777'), 'binary'],
    [sdk('/billing', '7'), 'structured'],
    [sdk('/shipping', '7'), 'structured'],
  ];
  const healthy = sdk('/billing', 'order-2026-000778');
  const isBroken = (event: Event) => broken.some(([e]) => e.id === event.id && e.source === event.source);
  let fixed = false;
  const failedOn = new Map<string, string[]>();
  const { consumer, applied, count } = recordingConsumer(
    t,
    db,
    schema,
    transport,
    topic,
    (event, on) => {
      if (fixed || !isBroken(event)) return;
      const identity = `${event.source} ${event.id}`;
      failedOn.set(identity, [...(failedOn.get(identity) ?? []), on]);
      throw new TransientError('invoice service down');
    },
    { delaysMs: [200, 200] },
  );
  const producer = transport.producer();
  t.after(() => producer.close());
  await consumer.start();
  await producer.send([
    ...broken.map(([event, mode]) => fromSdk(topic, event, mode)),
    fromSdk(topic, healthy, 'binary'),
  ]);
  const store = deadLetterStore({ schema });
  await eventually(async () => (await store.list(db)).length >= 3, 60_000, 'three dead letters');
  for (const [event] of broken) {
    // Each stage of the chain in order (a stage seen twice is an at-least-once redelivery, not a fault).
    const stages = [...new Set(failedOn.get(`${event.source} ${event.id}`))];
    assert.deepEqual(stages, [topic, `${topic}-retry-1`, `${topic}-retry-2`]);
  }
  const letters = await store.list(db);
  assert.deepEqual(
    letters.map((l) => [l.eventId, l.source, l.dedupKey, l.topic, l.code]).sort(),
    broken.map(([e]) => [e.id, e.source, dedupKey(e.source, e.id), topic, 'EFF_HANDLER_FAILED']).sort(),
    'dead letters show the original id and source, and keep the dedup key',
  );
  const dlt = await readTopic(transport, `${topic}-dlt`, 3);
  const onDlt = dlt.map((record) => Kafka.toEvent(toSdkMessage(record)) as CloudEvent<unknown>);
  assert.deepEqual(
    [...new Set(onDlt.map((e) => `${e.source} ${e.id}`))].sort(),
    broken.map(([e]) => `${e.source} ${e.id}`).sort(),
    'the DLT records are the same events for the SDK',
  );
  // The fix is deployed; a redrive crashes right after sending and is run again: both sends reach the consumer.
  fixed = true;
  let crashed = false;
  const faults = async (point: string) => {
    if (point === 'redrive:after-send' && !crashed) {
      crashed = true;
      throw new Error('crashed after sending');
    }
  };
  await assert.rejects(store.redrive(db, producer, {}, { faults }), /crashed after sending/);
  assert.equal((await store.redrive(db, producer)).length, 3);
  await eventually(async () => applied.length >= 4 && count('duplicate') >= 3, 60_000, 'redriven, sent twice');
  assert.equal(applied.length, 4, 'applied once each');
  assert.deepEqual(
    applied.map((e) => `${e.source} ${e.id}`).sort(),
    [healthy, ...broken.map(([e]) => e)].map((e) => `${e.source} ${e.id}`).sort(),
  );
  for (const letter of letters)
    console.log(`interop: redriven ${letter.source} ${letter.eventId} key ${letter.dedupKey}`);
});

// Key-ordered consumers compare and store the dedup key (not the raw id) in holds and parked records.
test('kafka: key-ordered, a string-id event in the dead letters holds its key; later records wait and apply in order', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const sdk = (id: string, n: number) =>
    new CloudEvent<unknown>({
      source: '/billing',
      id,
      type: 'invoice.issued',
      datacontenttype: 'application/json',
      partitionkey: 'customer-7',
      data: { n },
    });
  let fixed = false;
  const order: number[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: randomName('g'),
    topics: [topic],
    schema,
    logger: silentLogger,
    keyOrdered: true,
    drainIntervalMs: 200,
    maxAttempts: 1,
    handler: async (event) => {
      const { n } = event.data as { n: number };
      if (n === 1 && !fixed) throw new TransientError('down until fixed');
      order.push(n);
    },
  });
  t.after(() => consumer.close());
  const producer = transport.producer();
  t.after(() => producer.close());
  await consumer.start();
  await producer.send([fromSdk(topic, sdk('inv-1', 1), 'binary'), fromSdk(topic, sdk('inv-2', 2), 'structured')]);
  const store = deadLetterStore({ schema });
  await eventually(async () => (await store.list(db)).length >= 1, 30_000, 'the first one dead');
  const parked = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.parked_records`)).rows[0]?.n);
  const settled = async () => (await parked()) === 1 || (await store.list(db)).length > 1;
  await eventually(settled, 30_000, 'the second one parked (or dead-lettered)');
  assert.equal(await parked(), 1, 'the second one parked behind it');
  assert.deepEqual(order, []);
  fixed = true;
  await store.redrive(db, producer);
  await eventually(async () => order.length === 2, 30_000, 'both applied after the redrive');
  assert.deepEqual(order, [1, 2]);
});
