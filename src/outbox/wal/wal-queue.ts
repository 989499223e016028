// What the WAL relay received and has not yet published: the outbox rows of committed transactions, in commit order,
// each transaction closed by its commit's end position. A batch is taken from the head; the position that may be
// confirmed after it is the end of the last transaction the batch completed (a transaction split over two batches is
// confirmed only with the second).
import type { ColumnValue, Lsn, WalMessage } from './pgoutput.ts';

export interface WalRow {
  seq: string;
  topic: string;
  key: string;
  headers: Record<string, string>;
  payload: Buffer | null;
  size: number;
  /** The inserting transaction's id (0: read from the table). */
  xid: number;
}

type Item = { row: WalRow } | { commit: Lsn; commitTime: number };

export interface WalBatch {
  rows: WalRow[];
  /** The end of the last transaction completed by this batch (undefined: none completed). */
  confirm: Lsn | undefined;
  /** How many transactions the batch completed. */
  completed: number;
}

export function walQueue(schema: string) {
  const items: Item[] = [];
  let head = 0;
  let rows = 0;
  let open: WalRow[] | undefined;
  let xid = 0;
  let outbox: { relationId: number; columns: Map<string, number> } | undefined;
  /** Commit times of transactions received and not yet confirmed, oldest first: the lag in seconds. */
  const pendingCommits: number[] = [];

  function toRow(values: ColumnValue[], columns: Map<string, number>, xid: number): WalRow {
    const at = (name: string) => values[columns.get(name) ?? -1] ?? null;
    const payload = at('payload');
    const headers = at('headers');
    return {
      seq: at('seq')!.readBigInt64BE(0).toString(),
      topic: at('topic')!.toString('utf8'),
      key: at('key')!.toString('utf8'),
      // jsonb's binary form: a version byte, then the JSON text
      headers: headers ? JSON.parse(headers.toString('utf8', 1)) : {},
      payload: payload ? Buffer.from(payload) : null,
      size: payload?.length ?? 0,
      xid,
    };
  }

  return {
    /** Takes one decoded pgoutput message: the outbox's inserts of a transaction are queued at its commit. */
    receive(message: WalMessage): void {
      switch (message.tag) {
        case 'relation':
          if (message.namespace === schema && message.name === 'outbox') {
            outbox = { relationId: message.relationId, columns: new Map(message.columns.map((c, i) => [c, i])) };
          }
          return;
        case 'begin':
          open = [];
          xid = message.xid;
          return;
        case 'insert':
          if (open && outbox && message.relationId === outbox.relationId)
            open.push(toRow(message.values, outbox.columns, xid));
          return;
        case 'commit':
          if (open && open.length > 0) {
            for (const row of open) items.push({ row });
            items.push({ commit: message.endLsn, commitTime: message.commitTime });
            rows += open.length;
            pendingCommits.push(message.commitTime);
          }
          open = undefined;
          return;
        default:
          return;
      }
    },
    /** Rows waiting (received, not yet taken). */
    size: () => rows,
    /** Nothing received is waiting, and no transaction is half received. */
    idle: () => rows === 0 && head === items.length && open === undefined,
    /** Up to `maxRows` rows and about `maxBytes` payload bytes from the head (a single larger row goes alone). */
    take(maxRows: number, maxBytes: number): WalBatch | undefined {
      if (head === items.length) return undefined;
      const batch: WalRow[] = [];
      let bytes = 0;
      let confirm: Lsn | undefined;
      let completed = 0;
      while (head < items.length) {
        const item = items[head]!;
        if ('row' in item) {
          if (batch.length >= maxRows || (batch.length > 0 && bytes + item.row.size > maxBytes)) break;
          batch.push(item.row);
          bytes += item.row.size;
        } else {
          confirm = item.commit;
          completed++;
        }
        head++;
      }
      rows -= batch.length;
      if (head > 4096 && head * 2 > items.length) {
        items.splice(0, head);
        head = 0;
      }
      return { rows: batch, confirm, completed };
    },
    /** The first `count` transactions received are confirmed: they no longer count in the lag. */
    confirmed(count: number): void {
      pendingCommits.splice(0, count);
    },
    /** Commit times of received transactions not yet confirmed (the oldest first). */
    oldestPending: (): number | undefined => pendingCommits[0],
    /** Forgets everything (a new session streams again from the slot's confirmed position). */
    reset(): void {
      items.length = 0;
      head = 0;
      rows = 0;
      open = undefined;
      outbox = undefined;
      pendingCommits.length = 0;
    },
  };
}

export type WalQueue = ReturnType<typeof walQueue>;
