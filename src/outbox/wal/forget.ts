import type { Queryable } from '../../db/port.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { sleep } from '../../observability/sleep.ts';
import type { WalRow } from './wal-queue.ts';

/**
 * Deletes rows the broker acknowledged. A row not found is gone already (published and deleted before a crash), or
 * its transaction is not yet visible to this session (wal-running.sql): then it is tried again a moment later.
 */
export async function forgetPublished(db: Queryable, schema: string, rows: readonly WalRow[]): Promise<void> {
  const sql = loadSqlSet(import.meta.url, { remove: 'wal-delete.sql', running: 'wal-running.sql' }, schema);
  let left = rows;
  for (let attempt = 0; left.length > 0; attempt++) {
    if (attempt > 0) await sleep(Math.min(attempt, 20));
    const deleted = await db.query<{ seq: string }>(sql.remove, [left.map((row) => row.seq)]);
    if (deleted.rows.length === left.length) return;
    const gone = new Set(deleted.rows.map((row) => String(row.seq)));
    left = left.filter((row) => !gone.has(row.seq));
    const xids = [...new Set(left.map((row) => row.xid).filter((xid) => xid !== 0))];
    if (xids.length === 0) return;
    const { rows: state } = await db.query<{ running: boolean }>(sql.running, [xids]);
    if (!state[0]?.running) {
      // Visible now: one more delete settles it (rows still not found were deleted before).
      await db.query(sql.remove, [left.map((row) => row.seq)]);
      return;
    }
  }
}
