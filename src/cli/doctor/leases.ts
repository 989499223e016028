import type { Db } from '../../db/port.ts';
import { loadSql } from '../../db/sql.ts';
import { type Finding, finding, showMs } from './finding.ts';

/** Leases of the embedded log abandoned for longer than `graceMs`: their partitions are read by nobody. */
export async function checkLeases(db: Db, schema: string, graceMs: number): Promise<Finding> {
  const { rows } = await db.query<{ group_id: string; topic: string; partition: number; expired_ms: string }>(
    loadSql(import.meta.url, 'abandoned-leases.sql', schema),
    [graceMs],
  );
  if (rows.length === 0) return finding('ok', 'leases', `no embedded-log lease abandoned (grace ${showMs(graceMs)})`);
  const first = rows[0]!;
  const groups = [...new Set(rows.map((row) => row.group_id))].join(', ');
  return finding(
    'warn',
    'leases',
    `${rows.length} embedded-log leases abandoned (groups ${groups}); the oldest: ${first.topic}[${first.partition}] of ${first.group_id}, expired ${showMs(Math.round(Number(first.expired_ms) / 1000) * 1000)} ago`,
    'start a consumer of the group (it takes the partitions over at once); a group no longer used can be deleted from the log tables',
  );
}
