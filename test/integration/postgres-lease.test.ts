// Leases of the `postgres` log (issue 10, item 4): a batch longer than `leaseMs` must not lose its lease to nobody, and
// a member whose lease another member really took must drop the partition and never commit it, on PGlite and a server.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db, Queryable } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const leaseMs = 1000;
const slowMs = 2500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface World {
  schema: string;
  /** The database of one member: one PGlite shared by all (one session), or a pool of its own per member on a server. */
  member(): Db;
  transport(db: Db): ReturnType<typeof postgresTransport>;
}

async function open(t: TestContext, kind: 'PGlite' | 'server'): Promise<World | undefined> {
  const schema = randomName('lease');
  const transport = (db: Db) =>
    postgresTransport({ db, schema, leaseMs, heartbeatMs: 200, pollIntervalMs: 20, logger: silentLogger });
  if (kind === 'PGlite') {
    const db = await pgliteDb();
    t.after(() => db.close());
    await migrate(db, { schema });
    return { schema, member: () => db, transport };
  }
  if (!(await needs(t, 'postgres'))) return undefined;
  const dbs: Db[] = [];
  const member = () => {
    const db = pgDb({ max: 4 });
    dbs.push(db);
    return db;
  };
  await migrate(member(), { schema });
  t.after(async () => {
    if (!process.exitCode) await dbs[0]!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    for (const db of dbs) await db.close();
  });
  return { schema, member, transport };
}

/**
 * Consumers of the integration cases: per-record handler, retry topics on by default (a blamed record would be
 * forwarded), or in place with one attempt and one record per transaction (a blamed record would be a dead letter at once).
 */
type Slow = (n: number, tx: Queryable, record: { topic: string; partition: number }) => Promise<void>;

function member(world: World, topic: string, group: string, handler: Slow, inPlace: false | number = false) {
  const db = world.member();
  const consumer = createConsumer({
    db,
    transport: world.transport(db),
    group,
    topics: [topic],
    schema: world.schema,
    logger: silentLogger,
    ...(inPlace ? { maxAttempts: inPlace, maxBatchSize: 1, retry: { baseMs: 50, capMs: 100 } } : {}),
    ...(inPlace ? {} : { retryTopics: { delaysMs: [300] } }),
    handler: async (event, { tx, record }) => {
      const n = (event.data as { n: number }).n;
      await handler(n, tx, record);
      await tx.query(`INSERT INTO ${world.schema}.applied (n) VALUES ($1)`, [n]);
    },
  });
  return consumer;
}

async function produce(world: World, db: Db, topic: string, count: number) {
  const producer = world.transport(db).producer();
  await producer.send(
    Array.from({ length: count }, (_, n) =>
      encodeEvent(createEvent({ topic, type: 'lease.test', source: '/lease', key: `k${n}`, data: { n } })),
    ),
  );
}

async function appliedOf(world: World, db: Db): Promise<number[]> {
  const { rows } = await db.query<{ n: number }>(`SELECT n FROM ${world.schema}.applied ORDER BY n`);
  return rows.map((row) => row.n);
}

/** How many records were forwarded to the retry and dead-letter topics, and how many dead letters were kept. */
async function moved(world: World, db: Db, topic: string) {
  const admin = world.transport(db).admin();
  let forwarded = 0;
  for (const to of [`${topic}-retry-1`, `${topic}-dlt`]) {
    for (const { offset } of await admin.endOffsets(to)) forwarded += Number(offset);
  }
  return { forwarded, deadLetters: (await deadLetterStore({ schema: world.schema }).list(db)).length };
}

/**
 * Sleeps past the lease inside the batch and tells what became of the lease meanwhile: the proof that each test can see
 * the failure. On PGlite the batch holds the only session, so the lease runs out (the naive transport then refused the
 * commit); on a server the heartbeats renew it on another connection (heartbeats tied to the batch could not).
 */
async function outliveLease(world: World, tx: Queryable, group: string, tp: { topic: string; partition: number }) {
  const lease = `SELECT expires_at, expires_at < clock_timestamp() AS expired FROM ${world.schema}.log_leases
                  WHERE group_id = $1 AND topic = $2 AND partition = $3`;
  const read = async () =>
    (await tx.query<{ expires_at: Date; expired: boolean }>(lease, [group, tp.topic, tp.partition])).rows[0]!;
  const before = await read();
  await sleep(slowMs);
  const after = await read();
  return { expired: after.expired, renewed: after.expires_at.getTime() > before.expires_at.getTime() };
}

function assertOutlived(kind: 'PGlite' | 'server', seen: { expired: boolean; renewed: boolean }[], count: number) {
  assert.equal(seen.length, count, 'slow batches observed');
  for (const lease of seen) {
    if (kind === 'PGlite') assert.equal(lease.expired, true, 'the batch outlived its lease (one session: no renewal)');
    else assert.equal(lease.renewed, true, 'the heartbeats renewed the lease while the batch ran');
  }
}

const range = (count: number) => Array.from({ length: count }, (_, n) => n);

for (const kind of ['PGlite', 'server'] as const) {
  describe(`postgres transport leases (${kind})`, () => {
    test('a handler slower than the lease that then fails: only that record is forwarded, every record applied once', async (t) => {
      const world = await open(t, kind);
      if (!world) return;
      const db = world.member();
      await db.query(`CREATE TABLE ${world.schema}.applied (n int NOT NULL)`);
      const topic = randomName('slow').replace('_', '-');
      await world
        .transport(db)
        .admin()
        .createTopics([{ topic, partitions: 1 }]);
      await produce(world, db, topic, 5);
      let failedOnce = false;
      const group = randomName('g');
      const leases: { expired: boolean; renewed: boolean }[] = [];
      const consumer = member(world, topic, group, async (n, tx, record) => {
        if (n !== 1 || failedOnce) return;
        // Past the lease, then a failure: the range before it (record 0) is committed in a new transaction.
        leases.push(await outliveLease(world, tx, group, record));
        failedOnce = true;
        throw new Error('slow and failing, once');
      });
      t.after(() => consumer.close());
      await consumer.start();
      await eventually(async () => (await appliedOf(world, db)).length >= 5, 30_000, 'five applied');
      await consumer.close();
      assert.deepEqual(await appliedOf(world, db), range(5));
      assertOutlived(kind, leases, 1);
      // Record 1 failed once (forwarded once, to retry-1); record 0 never failed and must not have been blamed.
      assert.deepEqual(await moved(world, db, topic), { forwarded: 1, deadLetters: 0 });
    });

    test('two members, a handler slower than the lease: every record applied once, none forwarded or dead-lettered', async (t) => {
      const world = await open(t, kind);
      if (!world) return;
      const db = world.member();
      await db.query(`CREATE TABLE ${world.schema}.applied (n int NOT NULL)`);
      const topic = randomName('slow').replace('_', '-');
      const group = randomName('g');
      await world
        .transport(db)
        .admin()
        .createTopics([{ topic, partitions: 4 }]);
      const leases: { expired: boolean; renewed: boolean }[] = [];
      const slowOnce = new Set<number>();
      const slow: Slow = async (n, tx, record) => {
        if (n >= 2 || slowOnce.has(n)) return;
        slowOnce.add(n);
        leases.push(await outliveLease(world, tx, group, record));
      };
      const a = member(world, topic, group, slow);
      const b = member(world, topic, group, slow);
      t.after(() => Promise.all([a.close(), b.close()]));
      await a.start();
      await b.start();
      const holders = async () =>
        (
          await db.query<{ n: number }>(
            `SELECT count(DISTINCT member_id)::int AS n FROM ${world.schema}.log_leases WHERE group_id = $1`,
            [group],
          )
        ).rows[0]!.n;
      await eventually(async () => (await holders()) === 2, 30_000, 'both members holding partitions');
      await produce(world, db, topic, 8);
      await eventually(async () => (await appliedOf(world, db)).length >= 8, 60_000, 'eight applied');
      await Promise.all([a.close(), b.close()]);
      assert.deepEqual(await appliedOf(world, db), range(8), 'each record applied once, no duplicate');
      assertOutlived(kind, leases, 2);
      assert.deepEqual(await moved(world, db, topic), { forwarded: 0, deadLetters: 0 });
    });

    test('a commit refused because another member took the lease is no record failure: nothing dead-lettered, all applied once', async (t) => {
      const world = await open(t, kind);
      if (!world) return;
      const db = world.member();
      await db.query(`CREATE TABLE ${world.schema}.applied (n int NOT NULL)`);
      const topic = randomName('steal').replace('_', '-');
      const group = randomName('g');
      await world
        .transport(db)
        .admin()
        .createTopics([{ topic, partitions: 1 }]);
      await produce(world, db, topic, 3);
      let stolen = 0;
      const consumer = member(
        world,
        topic,
        group,
        async (n, tx) => {
          if (n !== 1 || stolen > 0) return;
          // Another member takes the partition before this batch commits (in this transaction, so the refusal's
          // rollback gives the lease back and this member can take the partition again).
          stolen = (
            await tx.query(`UPDATE ${world.schema}.log_leases SET member_id = 'thief' WHERE group_id = $1`, [group])
          ).rowCount!;
        },
        // One record per transaction, in place, one attempt: a refusal blamed on record 1 would dead-letter it.
        1,
      );
      t.after(() => consumer.close());
      await consumer.start();
      await eventually(async () => (await appliedOf(world, db)).length >= 3, 30_000, 'three applied');
      await consumer.close();
      assert.equal(stolen, 1, 'the lease was taken during the batch');
      assert.deepEqual(await appliedOf(world, db), range(3));
      assert.deepEqual(await moved(world, db, topic), { forwarded: 0, deadLetters: 0 });
    });

    test('a lost lease counts no attempt: a record that then fails once is retried, not dead-lettered', async (t) => {
      const world = await open(t, kind);
      if (!world) return;
      const db = world.member();
      await db.query(`CREATE TABLE ${world.schema}.applied (n int NOT NULL)`);
      const topic = randomName('steal').replace('_', '-');
      const group = randomName('g');
      await world
        .transport(db)
        .admin()
        .createTopics([{ topic, partitions: 1 }]);
      await produce(world, db, topic, 3);
      let calls = 0;
      const consumer = member(
        world,
        topic,
        group,
        async (n, tx) => {
          if (n !== 1) return;
          calls += 1;
          // First call: another member takes the partition before the commit (the refusal is no failure of record 1).
          if (calls === 1) {
            await tx.query(`UPDATE ${world.schema}.log_leases SET member_id = 'thief' WHERE group_id = $1`, [group]);
          }
          // Second call: a real failure, the first and only one counted; the third call succeeds.
          if (calls === 2) throw new Error('fails once');
        },
        // Two attempts in place: a lost lease counted as an attempt would make the real failure the last one.
        2,
      );
      t.after(() => consumer.close());
      await consumer.start();
      await eventually(async () => (await appliedOf(world, db)).length >= 3, 30_000, 'three applied');
      await consumer.close();
      assert.equal(calls, 3, 'lease lost, one real failure, then applied');
      assert.deepEqual(await appliedOf(world, db), range(3));
      assert.deepEqual(await moved(world, db, topic), { forwarded: 0, deadLetters: 0 });
    });

    test('a lease another member took: the commit is refused with EFF_LEASE_LOST, the batch aborted, the partition dropped', async (t) => {
      const world = await open(t, kind);
      if (!world) return;
      const db = world.member();
      const transport = world.transport(db);
      const topic = randomName('steal').replace('_', '-');
      const group = randomName('g');
      await transport.admin().createTopics([{ topic, partitions: 1 }]);
      await produce(world, db, topic, 3);
      const steal = (holdMs: number) =>
        db.query(
          `UPDATE ${world.schema}.log_leases SET member_id = 'thief',
                  expires_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
            WHERE group_id = $1`,
          [group, holdMs],
        );
      const holder = async () =>
        (
          await db.query<{ member_id: string }>(
            `SELECT member_id FROM ${world.schema}.log_leases WHERE group_id = $1`,
            [group],
          )
        ).rows[0]?.member_id;
      let refusal: unknown;
      let abortedAfterRefusal = false;
      let deliveredToThief = 0;
      const seen: IncomingRecord[] = [];
      const consumer = transport.consumer({ group, topics: [topic], maxBatchSize: 100, fromBeginning: true });
      t.after(() => consumer.close());
      await consumer.run(async (batch, control) => {
        if ((await holder()) === 'thief') deliveredToThief += 1;
        const last = batch.records.at(-1)!;
        if (refusal === undefined) {
          // Another member takes the partition while this batch runs (longer than this member's heartbeats notice).
          await steal(3 * leaseMs);
          refusal = await db
            .transaction((tx) => consumer.commitWithin!(tx, [positionAfter(last)]))
            .then(
              () => 'committed',
              (error: unknown) => error,
            );
          abortedAfterRefusal = control.signal.aborted;
          return;
        }
        await db.transaction((tx) => consumer.commitWithin!(tx, [positionAfter(last)]));
        seen.push(...batch.records);
        control.resolve(last.offset);
      });
      // The thief's lease runs out (it never heart-beats): the member rejoins and reads the partition from offset 0.
      await eventually(async () => seen.length >= 3, 30_000, 'the records after the thief let go');
      assert.ok(refusal instanceof EffectivelyError, `refused with an EffectivelyError, got ${String(refusal)}`);
      assert.equal(refusal.code, 'EFF_LEASE_LOST');
      assert.deepEqual(refusal.details, { leaseLost: true, topic, partition: 0 });
      assert.equal(abortedAfterRefusal, true, 'the batch signal is aborted once its lease is lost');
      assert.equal(deliveredToThief, 0, 'no batch of a partition whose lease another member holds');
      assert.deepEqual(
        seen.map((record) => record.offset),
        ['0', '1', '2'],
      );
    });

    test('a member whose lease was taken notices it by its heartbeats during the batch and drops the partition', async (t) => {
      const world = await open(t, kind);
      if (!world) return;
      const db = world.member();
      const transport = world.transport(db);
      const topic = randomName('steal').replace('_', '-');
      const group = randomName('g');
      await transport.admin().createTopics([{ topic, partitions: 1 }]);
      await produce(world, db, topic, 2);
      let stolen = false;
      let noticed = false;
      let deliveredWhileStolen = 0;
      const seen: IncomingRecord[] = [];
      const consumer = transport.consumer({ group, topics: [topic], maxBatchSize: 100, fromBeginning: true });
      t.after(() => consumer.close());
      await consumer.run(async (batch, control) => {
        const holder = (
          await db.query<{ member_id: string }>(
            `SELECT member_id FROM ${world.schema}.log_leases WHERE group_id = $1`,
            [group],
          )
        ).rows[0]?.member_id;
        if (holder === 'thief') deliveredWhileStolen += 1;
        if (!stolen) {
          stolen = true;
          await db.query(
            `UPDATE ${world.schema}.log_leases SET member_id = 'thief',
                    expires_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
              WHERE group_id = $1`,
            [group, 3 * leaseMs],
          );
          // No commit: only the heartbeats can tell this member its lease is gone.
          await eventually(async () => control.signal.aborted, 20_000, 'the batch signal to abort');
          noticed = true;
          return;
        }
        const last = batch.records.at(-1)!;
        await db.transaction((tx) => consumer.commitWithin!(tx, [positionAfter(last)]));
        seen.push(...batch.records);
        control.resolve(last.offset);
      });
      await eventually(async () => seen.length >= 2, 30_000, 'the records after the thief let go');
      assert.equal(noticed, true);
      assert.equal(deliveredWhileStolen, 0, 'no batch of a partition whose lease another member holds');
      assert.deepEqual(
        seen.map((record) => record.offset),
        ['0', '1'],
      );
    });
  });
}
