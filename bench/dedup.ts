// dedup cost as processed_events grows: the same batches of dedup claims timed at 1M rows and at 10M rows. The rows
// carry time-ordered ids (UUIDv7, as the library's own events do) and the claims fresh UUIDv7 ids. (Random ids — the
// UUIDv5 dedup keys of other producers' events — against a table of random ids cost more as it grows: see
// docs/dev/development.md; against this table they would all land past its ids and say nothing.)
import { migrate } from '../src/db/migrate.ts';
import type { Db } from '../src/db/port.ts';
import { loadSql } from '../src/db/sql.ts';
import { uuidv7 } from '../src/envelope/uuidv7.ts';
import { percentile, round } from './support.ts';

const consumer = 'bench-dedup';

/**
 * Grows `schema.processed_events` to `rows` rows of one consumer in one bulk insert: UUIDv7 ids one millisecond apart
 * from `baseMs` on (so older than any id made now), the random bits from md5.
 */
async function fillTo(db: Db, schema: string, from: number, rows: number, baseMs: number): Promise<number> {
  const started = performance.now();
  await db.query(
    `INSERT INTO ${schema}.processed_events (consumer, event_id, processed_at)
     SELECT $1, (lpad(to_hex($4::bigint + i), 12, '0') || '7' || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid,
            to_timestamp(($4::bigint + i) / 1000.0)
     FROM generate_series($2::bigint, $3::bigint - 1) AS i, LATERAL md5('fill-' || i) AS h`,
    [consumer, from, rows, baseMs],
  );
  await db.query(`VACUUM ANALYZE ${schema}.processed_events`);
  // The bulk insert's ~1 GB of dirty pages would otherwise be written out by a checkpoint during the timed claims: what
  // is timed is a claim against a table of that size, not against the server writing the fill to disk. CHECKPOINT
  // needs a superuser (or pg_checkpoint); without one the claims are timed as they come.
  await db.query('CHECKPOINT').catch(() => undefined);
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
        // The claim answers the ids claimed before it: none, for these fresh ids.
        if (claimed.rowCount !== 0)
          throw new Error(`bench: ${claimed.rowCount} of ${ids.length} fresh ids claimed before`);
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
 * table. A ratio above 1.5 means the table's growth costs the consumer.
 */
export async function dedupGrowth(db: Db, schema: string, small: number, large: number, rounds = 40) {
  await migrate(db, { schema });
  const claim = loadSql(new URL('../src/consumer/', import.meta.url).href, 'dedup.sql', schema);
  const batches = Array.from({ length: rounds }, () => Array.from({ length: 1000 }, () => uuidv7()));
  const baseMs = Date.now() - 2 * large;
  const time = async () => {
    await timeClaims(db, claim, batches.slice(0, 5)); // warm-up: plans and the index's upper pages
    return timeClaims(db, claim, batches);
  };
  const fillSmall = await fillTo(db, schema, 0, small, baseMs);
  const atSmall = await time();
  const fillLarge = await fillTo(db, schema, small, large, baseMs);
  const atLarge = await time();
  return {
    rows_small: small,
    rows_large: large,
    claim_1000_ms: [round(atSmall), round(atLarge)],
    fill_seconds: round(fillSmall + fillLarge, 1),
    ratio: round(atLarge / atSmall),
  };
}
