import type { Db } from '../../db/port.ts';
import { loadSql } from '../../db/sql.ts';
import { listRefused } from '../../outbox/refused.ts';
import { type Finding, finding, showMs } from './finding.ts';

/** Rows waiting in the outbox: a warning when the oldest waited longer than `stuckAfterMs` (no relay, or one stuck). */
export async function checkOutboxAge(db: Db, schema: string, stuckAfterMs: number): Promise<Finding> {
  const { rows } = await db.query<{ n: string; oldest_ms: string }>(
    loadSql(import.meta.url, 'outbox-oldest.sql', schema),
  );
  const count = Number(rows[0]?.n ?? 0);
  const oldestMs = Number(rows[0]?.oldest_ms ?? 0);
  const what = `${count} rows pending, the oldest for ${showMs(Math.round(oldestMs / 1000) * 1000)}`;
  if (count > 0 && oldestMs > stuckAfterMs)
    return finding(
      'warn',
      'outbox',
      `${what} (over ${showMs(stuckAfterMs)})`,
      `start a relay (\`npx effectively relay --schema ${schema}\`) or see why it does not publish; rows held behind a refused row wait for it (see outbox-refused)`,
    );
  return finding('ok', 'outbox', count === 0 ? 'no rows pending' : what);
}

/** Rows the transport refused for good: their events (and the later rows of their keys) are not published. */
export async function checkOutboxRefused(db: Db, schema: string): Promise<Finding> {
  const rows = await listRefused(db, { schema });
  if (rows.length === 0) return finding('ok', 'outbox-refused', 'no rows refused by the transport');
  const first = rows[0]!;
  const held = rows.reduce((sum, row) => sum + row.held, 0);
  return finding(
    'fail',
    'outbox-refused',
    `${rows.length} rows refused for good (${held} held behind them); the oldest: seq ${first.seq}, topic ${first.topic}, ${first.errorCode}`,
    'fix the cause, then `npx effectively outbox retry --seqs ...` (or `outbox discard --seqs ...`); `outbox refused` lists them',
  );
}
