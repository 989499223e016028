// The few messages of PostgreSQL's streaming replication protocol and of its built-in `pgoutput` plugin (protocol
// version 1, binary column values) that the outbox needs: transaction boundaries and inserted rows. Everything else
// (updates, deletes, types, origins) is skipped by its tag.

/** A position in the write-ahead log, as an unsigned 64-bit integer. */
export type Lsn = bigint;

export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

export function parseLsn(text: string): Lsn {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** A column value as pgoutput sent it in binary mode: the type's send format (null for SQL NULL). */
export type ColumnValue = Buffer | null;

export type WalMessage =
  | { tag: 'begin'; finalLsn: Lsn; commitTime: number; xid: number }
  | { tag: 'commit'; commitLsn: Lsn; endLsn: Lsn; commitTime: number }
  | { tag: 'relation'; relationId: number; namespace: string; name: string; columns: string[] }
  | { tag: 'insert'; relationId: number; values: ColumnValue[] }
  | { tag: 'other' };

export type StreamMessage =
  | { tag: 'data'; start: Lsn; end: Lsn; message: WalMessage }
  | { tag: 'keepalive'; end: Lsn; replyRequested: boolean };

// PostgreSQL's epoch (2000-01-01) in Unix milliseconds; its timestamps count microseconds from there.
const epochMs = 946_684_800_000;

function timestampMs(buffer: Buffer, at: number): number {
  return epochMs + Number(buffer.readBigInt64BE(at) / 1000n);
}

/** Decodes one CopyData payload of a logical replication stream. */
export function decodeStream(buffer: Buffer): StreamMessage | undefined {
  const kind = buffer[0];
  if (kind === 0x77 /* w: XLogData */) {
    return {
      tag: 'data',
      start: buffer.readBigUInt64BE(1),
      end: buffer.readBigUInt64BE(9),
      message: decodePgoutput(buffer.subarray(25)),
    };
  }
  if (kind === 0x6b /* k: primary keepalive */) {
    return { tag: 'keepalive', end: buffer.readBigUInt64BE(1), replyRequested: buffer[17] === 1 };
  }
  return undefined;
}

function cstring(buffer: Buffer, at: number): [string, number] {
  const end = buffer.indexOf(0, at);
  return [buffer.toString('utf8', at, end), end + 1];
}

export function decodePgoutput(buffer: Buffer): WalMessage {
  switch (buffer[0]) {
    case 0x42 /* B */:
      return {
        tag: 'begin',
        finalLsn: buffer.readBigUInt64BE(1),
        commitTime: timestampMs(buffer, 9),
        xid: buffer.readUInt32BE(17),
      };
    case 0x43 /* C */:
      return {
        tag: 'commit',
        commitLsn: buffer.readBigUInt64BE(2),
        endLsn: buffer.readBigUInt64BE(10),
        commitTime: timestampMs(buffer, 18),
      };
    case 0x52 /* R */:
      return decodeRelation(buffer);
    case 0x49 /* I */:
      // Int32 relation id, then 'N' and the new tuple
      return { tag: 'insert', relationId: buffer.readUInt32BE(1), values: decodeTuple(buffer, 6) };
    default:
      return { tag: 'other' };
  }
}

function decodeRelation(buffer: Buffer): WalMessage {
  const relationId = buffer.readUInt32BE(1);
  const [namespace, afterNamespace] = cstring(buffer, 5);
  const [name, afterName] = cstring(buffer, afterNamespace);
  let at = afterName + 1; // replica identity
  const count = buffer.readUInt16BE(at);
  at += 2;
  const columns: string[] = [];
  for (let i = 0; i < count; i++) {
    at += 1; // flags
    let column: string;
    [column, at] = cstring(buffer, at);
    columns.push(column);
    at += 8; // type oid, type modifier
  }
  return { tag: 'relation', relationId, namespace, name, columns };
}

function decodeTuple(buffer: Buffer, from: number): ColumnValue[] {
  const count = buffer.readUInt16BE(from);
  let at = from + 2;
  const values: ColumnValue[] = [];
  for (let i = 0; i < count; i++) {
    const kind = buffer[at];
    at += 1;
    if (kind === 0x62 /* b */ || kind === 0x74 /* t */) {
      const length = buffer.readUInt32BE(at);
      at += 4;
      values.push(buffer.subarray(at, at + length));
      at += length;
    } else {
      values.push(null); // n: NULL (u, an unchanged TOAST value, only comes with updates)
    }
  }
  return values;
}

/** A standby status update: everything up to `lsn` is written, flushed and applied (the slot may move past it). */
export function statusUpdate(lsn: Lsn, replyRequested = false): Buffer {
  const buffer = Buffer.alloc(34);
  buffer[0] = 0x72; // r
  buffer.writeBigUInt64BE(lsn, 1);
  buffer.writeBigUInt64BE(lsn, 9);
  buffer.writeBigUInt64BE(lsn, 17);
  buffer.writeBigInt64BE(BigInt(Date.now() - epochMs) * 1000n, 25);
  buffer[33] = replyRequested ? 1 : 0;
  return buffer;
}
