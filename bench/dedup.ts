// dedup cost as processed_events grows: the same batches of dedup claims timed at 1M rows and at 10M rows.
import { randomUUID } from 'node:crypto';
import { migrate } from '../src/db/migrate.ts';
import type { Db } from '../src/db/port.ts';
import { loadSql } from '../src/db/sql.ts';
import { percentile, round } from './support.ts';

const consumer = 'bench-dedup';

/** Grows `schema.processed_events` to `rows` rows of one consumer in one bulk insert (ids from md5, so reproducible). */
async function fillTo(db: Db, schema: string, from: number, rows: number): Promise<number> {
  const started = performance.now();
  await db.query(
    `INSERT INTO ${schema}.processed_events (consumer, event_id, processed_at)
     SELECT $1, md5('fill-' || i)::uuid, now() - make_interval(secs => ($3::bigint - i) / 1000.0)
     FROM generate_series($2::bigint, $3::bigint - 1) AS i`,
    [consumer, from, rows],
  );
  await db.query(`VACUUM ANALYZE ${schema}.processed_events`);
  return (performance.now() - started) / 1000;
}

/** Each batch claimed in a transaction that is rolled back, so the very same batches can be claimed again later. */
async function timeClaims(db: Db, claim: string, batches: string[][]): Promise<number> {
  const times: number[] = [];
  for (const ids of batches) {
    await db
      .transaction(async (tx) => {
        const started = performance.now();
        const claimed = await tx.query(claim, [consumer, ids]);
        times.push(performance.now() - started);
        if (claimed.rowCount !== ids.length)
          throw new Error(`bench: dedup claimed ${claimed.rowCount} of ${ids.length}`);
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
  }
  return percentile(
    [...times].sort((a, b) => a - b),
    50,
  );
}

const rollback = new Error('bench: roll the claims back');

/**
 * The median time of one 1,000-id claim (`src/consumer/dedup.sql`, fresh ids) at `small` and at `large` rows in the
 * table. A ratio above 1.5 means the table should be partitioned by time (retention drops partitions).
 */
export async function dedupGrowth(db: Db, schema: string, small: number, large: number, rounds = 40) {
  await migrate(db, { schema });
  const claim = loadSql(new URL('../src/consumer/', import.meta.url).href, 'dedup.sql', schema);
  const batches = Array.from({ length: rounds }, () => Array.from({ length: 1000 }, () => randomUUID()));
  const fillSmallSeconds = await fillTo(db, schema, 0, small);
  await timeClaims(db, claim, batches.slice(0, 5)); // warm-up: plans and the index's upper pages
  const smallMs = await timeClaims(db, claim, batches);
  const fillLargeSeconds = await fillTo(db, schema, small, large);
  await timeClaims(db, claim, batches.slice(0, 5));
  const largeMs = await timeClaims(db, claim, batches);
  return {
    rows_small: small,
    rows_large: large,
    claim_1000_ms_small: round(smallMs),
    claim_1000_ms_large: round(largeMs),
    fill_seconds: round(fillSmallSeconds + fillLargeSeconds, 1),
    ratio: round(largeMs / smallMs),
  };
}
