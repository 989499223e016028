// The embedded log's heartbeat must not shorten a lease that an offset commit just extended (issue 38, point 5). A
// commit extends its lease from `clock_timestamp()`; the heartbeat renews from its statement's `now()`. When the
// heartbeat started first and then waited for the row the commit's transaction held, its `now()` is the earlier of the
// two, and writing it cut the lease back. The heartbeat now keeps the later of the two.
// On PGlite (one session: statements never interleave) and on the server, a lease later than the heartbeat's own
// renewal is kept; on the server, the real interleaving too. The naive twin runs the heartbeat as it was (the plain
// assignment) and sees the lease cut back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';
import { eitherDb } from '../support/either-db.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const database = eitherDb();

const consumerModule = new URL('../../src/transport/postgres/consumer.ts', import.meta.url).href;
const group = 'g';
const member = 'm-1';
const leaseMs = 1000;

/** The heartbeat as it is, or as it was before the fix (the naive twin). */
function heartbeatSql(schema: string, naive: boolean): string {
  const sql = loadSql(consumerModule, 'sql/heartbeat.sql', schema);
  if (!naive) return sql;
  const before = sql.replace(
    /greatest\(expires_at, (now\(\) \+ make_interval\(secs => \$4::double precision \/ 1000\))\)/,
    '$1',
  );
  assert.notEqual(before, sql, 'the naive twin found the renewal to revert');
  return before;
}

/** A lease of `member` on orders[0] ending `inSeconds` from now; returns its end as text (microseconds). */
async function leaseEnding(db: Db, schema: string, inSeconds: number): Promise<string> {
  // a lease is of a partition that exists (013)
  await db.query(`INSERT INTO ${schema}.log_topics (topic, partitions) VALUES ('orders', 1) ON CONFLICT DO NOTHING`);
  await db.query(`INSERT INTO ${schema}.log_partitions (topic, partition) VALUES ('orders', 0) ON CONFLICT DO NOTHING`);
  const { rows } = await db.query<{ ends: string }>(
    `INSERT INTO ${schema}.log_leases (group_id, topic, partition, member_id, expires_at)
     VALUES ($1, 'orders', 0, $2, now() + make_interval(secs => $3)) RETURNING expires_at::text AS ends`,
    [group, member, inSeconds],
  );
  return rows[0]!.ends;
}

const leaseEnd = async (db: Db, schema: string) =>
  (await db.query<{ ends: string }>(`SELECT expires_at::text AS ends FROM ${schema}.log_leases`)).rows[0]!.ends;

/** True when timestamp `a` is earlier than `b` (compared by the database, to the microsecond). */
const earlier = async (db: Db, a: string, b: string) =>
  (await db.query<{ earlier: boolean }>('SELECT $1::timestamptz < $2::timestamptz AS earlier', [a, b])).rows[0]!
    .earlier;

for (const where of ['pglite', 'server'] as const) {
  for (const naive of [false, true]) {
    const title = naive
      ? `naive twin, ${where}: the heartbeat as it was cuts a lease that ends later than its renewal back to its own`
      : `${where}: the heartbeat keeps a lease that ends later than its own renewal`;
    test(title, async (t) => {
      if (where === 'server' && !(await needs(t, 'postgres'))) return;
      const { db, schema } = await database(t, where);
      const extended = await leaseEnding(db, schema, 60); // as a commit's clock can leave it
      const { rows } = await db.query<{ held: unknown[] }>(heartbeatSql(schema, naive), [
        group,
        member,
        ['orders'],
        leaseMs,
      ]);
      assert.equal(rows[0]!.held.length, 1, 'the lease is still held');
      assert.equal(await earlier(db, await leaseEnd(db, schema), extended), naive);
    });
  }
}

for (const naive of [false, true]) {
  const title = naive
    ? 'naive twin, server: a heartbeat that waited for the row of a commit extending the lease cuts it back'
    : 'server: a heartbeat that waited for the row of a commit extending the lease leaves the commit its extension';
  test(title, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { db, schema } = await freshSchema(t);
    await db.query(`INSERT INTO ${schema}.log_topics (topic, partitions) VALUES ('orders', 1)`);
    await db.query(`INSERT INTO ${schema}.log_partitions (topic, partition) VALUES ('orders', 0)`);
    await leaseEnding(db, schema, 1);
    const commit = loadSql(consumerModule, 'sql/commit.sql', schema);
    const pool = pgDb({ max: 2 });
    t.after(() => pool.close());
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let extendedTo = '';
    let holder: number | undefined;
    // The commit's transaction holds the lease row (as its commit statement will) ...
    const committing = pool.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM ${schema}.log_leases FOR UPDATE`);
      holder = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await released;
      // ... and extends the lease from its clock, after the heartbeat's statement began.
      await tx.query(commit, [group, 'orders', 0, '5', member, leaseMs]);
      extendedTo = (await tx.query<{ ends: string }>(`SELECT expires_at::text AS ends FROM ${schema}.log_leases`))
        .rows[0]!.ends;
    });
    await eventually(async () => holder !== undefined, 10_000, 'the lease row held');
    const beat = pool.query(heartbeatSql(schema, naive), [group, member, ['orders'], leaseMs]);
    try {
      await eventually(
        async () =>
          (await db.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [holder]))
            .rowCount === 1,
        10_000,
        'the heartbeat waiting for the lease row',
      );
    } finally {
      release();
    }
    await committing;
    await beat;
    assert.equal(await earlier(db, await leaseEnd(db, schema), extendedTo), naive);
  });
}
