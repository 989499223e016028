// A topic of the embedded log deleted and created again (issue 38, point 5).
// 1. A producer remembered the topic's partition count; after the topic came back with another count it went on
//    partitioning by the old one, so one key landed on two partitions (its old records and a fresh producer's on one,
//    its own on another). Each reservation now checks the count it partitioned by; on PGlite and on the server.
// 2. A group's first offset commit of a partition (an insert) in flight while the topic is deleted: the delete did not
//    see the uncommitted row, the offset stayed, and once the topic came back the group started there, past the new
//    records. The offsets and leases now belong to their partition (foreign keys, migration 013): the delete waits for
//    the commit and removes it. Server only: PGlite is one session, so a delete cannot run while a commit is open.
// Each naive twin runs the library's SQL with the protection taken out and sees the fault.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db, Queryable } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { partitionOf } from '../../src/transport/postgres/codec.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eitherDb } from '../support/either-db.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const database = eitherDb();
const producerModule = new URL('../../src/transport/postgres/producer.ts', import.meta.url).href;
const keys = Array.from({ length: 24 }, (_, n) => `order-${n}`);
const records = (round: string) =>
  keys.map((key) => ({ topic: 'orders', key, value: Buffer.from(round), headers: {} }));

/** Each key's partitions on the log, and the keys found on more than one. */
async function partitionsOfKeys(db: Db, schema: string) {
  const { rows } = await db.query<{ key: string; partitions: number[] }>(
    `SELECT key, array_agg(DISTINCT partition ORDER BY partition) AS partitions
       FROM ${schema}.log_records WHERE topic = 'orders' GROUP BY key`,
  );
  return { rows, split: rows.filter((row) => row.partitions.length > 1).map((row) => row.key) };
}

/** The naive twin's append: the reservation as it was (no partition count checked), by the count it remembered. */
async function naiveSend(tx: Queryable, schema: string, partitions: number, round: string): Promise<void> {
  const reserve = loadSql(producerModule, 'sql/reserve.sql', schema);
  const unchecked = reserve.replace(' AND t.partitions = $4', '');
  assert.notEqual(unchecked, reserve, 'the naive twin found the check to take out');
  const append = loadSql(producerModule, 'sql/append.sql', schema);
  for (const key of keys) {
    const partition = partitionOf(key, partitions);
    const { rows } = await tx.query<{ first: string }>(unchecked, ['orders', partition, 1]);
    assert.equal(rows.length, 1, `partition ${partition} exists in the new topic`);
    await tx.query(append, ['orders', partition, rows[0]!.first, [key], ['{}'], [Buffer.from(round)], [null]]);
  }
}

for (const where of ['pglite', 'server'] as const) {
  for (const naive of [false, true]) {
    const title = naive
      ? `naive twin, ${where}: a producer partitioning by the count it remembered puts a key on two partitions`
      : `${where}: a producer that remembered a topic's partition count partitions by its count of now once the topic came back`;
    test(title, async (t) => {
      if (where === 'server' && !(await needs(t, 'postgres'))) return;
      const { db, schema } = await database(t, where);
      const transport = postgresTransport({ db, schema, logger: silentLogger });
      const admin = transport.admin();
      const producer = transport.producer();
      t.after(() => producer.close());
      await admin.createTopics([{ topic: 'orders', partitions: 3 }]);
      await producer.send(records('before'));
      await admin.deleteTopics(['orders']);
      await admin.createTopics([{ topic: 'orders', partitions: 7 }]);
      // Another process's producer, which never knew the old topic, writes every key where the count of now puts it.
      const fresh = transport.producer();
      await fresh.send(records('fresh'));
      await fresh.close();
      if (naive) await db.transaction((tx) => naiveSend(tx, schema, 3, 'remembered'));
      else await producer.send(records('remembered'));
      const { rows, split } = await partitionsOfKeys(db, schema);
      assert.equal(rows.length, keys.length);
      if (naive) {
        assert.ok(split.length > 0, 'some key is on two partitions');
        return;
      }
      assert.deepEqual(split, [], 'no key on two partitions');
      for (const row of rows) assert.deepEqual(row.partitions, [partitionOf(row.key, 7)], row.key);
      const { rows: counted } = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${schema}.log_records WHERE topic = 'orders'`,
      );
      assert.equal(Number(counted[0]!.n), 2 * keys.length, 'both rounds written after the topic came back');
    });
  }
}

/** The delete of topics as it was (its own snapshot's offsets and leases), with the foreign keys of 013 dropped. */
async function naiveDeletes(db: Db, schema: string): Promise<(topics: string[]) => Promise<unknown>> {
  await db.query(`ALTER TABLE ${schema}.log_offsets DROP CONSTRAINT log_offsets_topic_partition_fkey`);
  await db.query(`ALTER TABLE ${schema}.log_leases DROP CONSTRAINT log_leases_topic_partition_fkey`);
  return (topics) =>
    db.query(
      `WITH offsets AS (DELETE FROM ${schema}.log_offsets WHERE topic = ANY($1::text[])),
            leases AS (DELETE FROM ${schema}.log_leases WHERE topic = ANY($1::text[]))
       DELETE FROM ${schema}.log_topics WHERE topic = ANY($1::text[])`,
      [topics],
    );
}

for (const naive of [false, true]) {
  const title = naive
    ? 'naive twin, server: the delete as it was keeps an offset committed while it ran, and the topic come back is skipped'
    : "server: a topic deleted during a group's first offset commit comes back with no offset, and the group reads it all";
  test(title, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { db, schema } = await database(t, 'server');
    const transport = postgresTransport({ db, schema, pollIntervalMs: 20, heartbeatMs: 100, logger: silentLogger });
    const admin = transport.admin();
    const deleteTopics = naive ? await naiveDeletes(db, schema) : (topics: string[]) => admin.deleteTopics(topics);
    await admin.createTopics([{ topic: 'orders', partitions: 1 }]);
    const producer = transport.producer();
    t.after(() => producer.close());
    await producer.send(keys.slice(0, 5).map((key) => ({ topic: 'orders', key, value: null, headers: {} })));

    // The group's first batch commits its first offset in its transaction, and holds it open until told.
    let committing!: () => void;
    const inFlight = new Promise<void>((resolve) => {
      committing = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const options = { group: 'g', topics: ['orders'], maxBatchSize: 100, fromBeginning: true };
    const first = transport.consumer(options);
    let batches = 0;
    await first.run(async (batch, control) => {
      if (batches++ > 0) return;
      const last = batch.records.at(-1)!.offset;
      await db.transaction(async (tx) => {
        await first.commitWithin!(tx, [{ topic: 'orders', partition: 0, offset: String(BigInt(last) + 1n) }]);
        committing();
        await released;
      });
      control.resolve(last);
    });
    await inFlight;
    const deleted = deleteTopics(['orders']);
    // The delete waits for the open commit (for the lease row it locked; now also for the partition's row), and only
    // then goes on: what it removes is what differs.
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0 AND query LIKE $1`,
            [`%${schema}.log_topics%`],
          )
        ).rowCount! > 0,
      10_000,
      'the delete waiting for the commit',
    );
    release();
    await deleted;
    await first.close();

    await admin.createTopics([{ topic: 'orders', partitions: 1 }]);
    await producer.send(keys.slice(0, 3).map((key) => ({ topic: 'orders', key, value: null, headers: {} })));
    const committed = await admin.committedOffsets('g', 'orders');
    if (naive) {
      assert.deepEqual(
        committed.map((c) => c.offset),
        ['5'],
        'the offset of the old topic stayed: the group would start past the 3 new records',
      );
      return;
    }
    assert.deepEqual(
      committed.map((c) => c.offset),
      ['-1'],
      'no offset left of the old topic',
    );
    const seen: string[] = [];
    const second = transport.consumer(options);
    t.after(() => second.close());
    await second.run(async (batch, control) => {
      for (const record of batch.records) seen.push(record.offset);
      control.resolve(batch.records.at(-1)!.offset);
    });
    await eventually(async () => seen.length >= 3, 10_000, 'the group reading the topic come back');
    assert.deepEqual(seen, ['0', '1', '2']);
  });
}
