import type { Db, Queryable } from '../../db/port.ts';
import { loadSql } from '../../db/sql.ts';
import type { WalRow } from './wal-queue.ts';

interface TableRow extends Record<string, unknown> {
  seq: string;
  topic: string;
  key: string;
  headers: Record<string, string>;
  payload: string | null;
  size: number;
}

/**
 * Publishes the rows a new slot will never stream: those of its exported snapshot (committed before its consistent
 * point), oldest first, in chunks, each deleted once published. The snapshot is imported in a repeatable-read
 * transaction that lasts the whole catch-up, so every chunk reads the same set of rows.
 */
export async function catchUp(
  db: Db,
  schema: string,
  snapshot: string,
  chunk: number,
  publish: (rows: WalRow[]) => Promise<void>,
): Promise<number> {
  const read = loadSql(import.meta.url, 'wal-catch-up.sql', schema);
  return db.transaction(async (tx: Queryable) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await tx.query(`SET TRANSACTION SNAPSHOT '${snapshot.replace(/[^0-9A-Za-z-]/g, '')}'`);
    let after = '0';
    let total = 0;
    for (;;) {
      const { rows } = await tx.query<TableRow>(read, [after, chunk]);
      if (rows.length === 0) return total;
      await publish(
        rows.map((row) => ({
          seq: String(row.seq),
          topic: row.topic,
          key: row.key,
          headers: row.headers,
          payload: row.payload === null ? null : Buffer.from(row.payload, 'base64'),
          size: Number(row.size),
          xid: 0,
        })),
      );
      total += rows.length;
      after = String(rows.at(-1)!.seq);
    }
  });
}
