// Partitions in parallel (issue 13, item 2) on the `postgres` transport: each assigned partition has a worker of its
// own in a bounded pool; a revocation waits for the revoked partition's batch in flight only, never for the others'.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { gates } from '../support/gates.ts';
import { needs } from '../support/services.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function world(t: TestContext, partitions: number) {
  if (!(await needs(t, 'postgres'))) return undefined;
  const dbs: Db[] = [];
  const member = () => {
    const db = pgDb({ max: 6 });
    dbs.push(db);
    return db;
  };
  const schema = randomName('parts');
  const db = member();
  await migrate(db, { schema });
  t.after(async () => {
    if (!process.exitCode) await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    for (const each of dbs) await each.close();
  });
  const transport = (on: Db) =>
    postgresTransport({ db: on, schema, leaseMs: 1500, heartbeatMs: 150, pollIntervalMs: 20, logger: silentLogger });
  const topic = randomName('parts').replace('_', '-');
  await transport(db).admin().createTopics([{ topic, partitions }]);
  const producer = transport(db).producer();
  await producer.send(
    Array.from({ length: 40 }, (_, n) =>
      encodeEvent(createEvent({ topic, type: 'parts.test', source: '/parts', key: `k${n}`, data: { n } })),
    ),
  );
  return { db, schema, topic, member, transport };
}

describe('partitions in parallel (postgres transport)', () => {
  test('a revocation waits for the revoked partition only; the other batch stays in flight meanwhile', async (t) => {
    const w = await world(t, 2);
    if (!w) return;
    const group = randomName('g');
    const gate = gates();
    const inFlight = new Set<number>();
    let both = false;
    const revoked: number[] = [];
    const seenByA: IncomingRecord[] = [];
    const seenByB: IncomingRecord[] = [];
    const dbA = w.member();
    const a = w.transport(dbA).consumer({
      group,
      topics: [w.topic],
      maxBatchSize: 100,
      fromBeginning: true,
      partitionsInFlight: 2,
      onRevoke: async (partitions) => void revoked.push(...partitions.map((p) => p.partition)),
    });
    t.after(() => {
      // A failing run must not leave batches waiting on a gate forever (close waits for them).
      gate.open(0);
      gate.open(1);
      return a.close();
    });
    await a.run(async (batch, control) => {
      inFlight.add(batch.partition);
      if (inFlight.size === 2) both = true;
      await gate.wait(batch.partition);
      inFlight.delete(batch.partition);
      const last = batch.records.at(-1)!;
      await dbA.transaction((tx) => a.commitWithin!(tx, [positionAfter(last)]));
      seenByA.push(...batch.records);
      control.resolve(last.offset);
    });
    await eventually(async () => both, 10_000, 'a batch of each partition in flight at once');

    // B joins: members sort by their time-ordered ids, so the deal gives A partition 0 and B partition 1.
    const dbB = w.member();
    const b = w.transport(dbB).consumer({ group, topics: [w.topic], maxBatchSize: 100, fromBeginning: true });
    t.after(() => b.close());
    await b.run(async (batch, control) => {
      const last = batch.records.at(-1)!;
      await dbB.transaction((tx) => b.commitWithin!(tx, [positionAfter(last)]));
      seenByB.push(...batch.records);
      control.resolve(last.offset);
    });
    await sleep(600); // a few heartbeats: A knows partition 1 is no longer its share, and waits for its batch
    assert.equal(revoked.length, 0, 'no revocation while the revoked partition has a batch in flight');
    gate.open(1);
    await eventually(async () => revoked.includes(1), 10_000, 'partition 1 revoked from A');
    assert.ok(inFlight.has(0), "partition 0's batch was still in flight: the revocation did not wait for it");
    // B reads partition 1 from A's committed offset while A's batch of partition 0 is still open.
    const producer = w.transport(w.db).producer();
    await producer.send(
      Array.from({ length: 20 }, (_, n) =>
        encodeEvent(
          createEvent({ topic: w.topic, type: 'parts.test', source: '/parts', key: `late${n}`, data: { n } }),
        ),
      ),
    );
    await eventually(async () => seenByB.length > 0, 10_000, 'B reading partition 1');
    assert.ok(inFlight.has(0), 'partition 0 still in flight while B read partition 1');
    gate.open(0);
    await eventually(async () => seenByA.length + seenByB.length >= 60, 20_000, 'every record delivered');
    await Promise.all([a.close(), b.close()]);
    const offsets = [...seenByA, ...seenByB].map((r) => `${r.partition}:${r.offset}`);
    assert.equal(
      new Set(offsets).size,
      offsets.length,
      'no record delivered twice (the revoked batch committed first)',
    );
    assert.ok(
      seenByB.every((r) => r.partition === 1),
      'B only read the partition it was dealt',
    );
  });
});
