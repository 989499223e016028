import { librarySchema } from '../db/identifiers.ts';
import type { Db, Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { notifyChannel } from './outbox.ts';

/** An outbox row the transport refused for good, set aside by the relay (table `outbox_refused`). */
export interface RefusedRow {
  /** The row's outbox position; a retry puts it back there. */
  seq: string;
  /** The event id. */
  id: string;
  topic: string;
  key: string;
  /** The transport's code: Kafka's (`ERR_MSG_SIZE_TOO_LARGE`, `ERR_TOPIC_EXCEPTION`...), a SQLSTATE, or an `EFF_*`. */
  errorCode: string;
  reason: string;
  refusedAt: Date;
  /** Payload bytes (null: no payload). */
  size: number | null;
  /** Later rows of the same key waiting in the outbox behind this one (not published until it is retried or discarded). */
  held: number;
}

export interface RefusedOptions {
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
}

export interface RefusedSelection extends RefusedOptions {
  /** Which rows (by `seq`); all of them when omitted. */
  seqs?: readonly string[];
}

const files = {
  list: 'refused-list.sql',
  lock: 'refused-lock.sql',
  retry: 'refused-retry.sql',
  discard: 'refused-discard.sql',
  all: 'refused-seqs.sql',
  count: 'refused-count.sql',
  keys: 'refused-keys.sql',
  restream: 'refused-restream.sql',
};

function statements(schema: string | undefined) {
  const name = librarySchema(schema);
  return { schema: name, sql: loadSqlSet(import.meta.url, files, name) };
}

/** The rows set aside, oldest first. */
export async function listRefused(db: Queryable, options: RefusedOptions = {}): Promise<RefusedRow[]> {
  const { sql } = statements(options.schema);
  const { rows } = await db.query<{
    seq: string;
    id: string;
    topic: string;
    key: string;
    error_code: string;
    reason: string;
    refused_at: Date;
    size: number | null;
    held: string;
  }>(sql.list);
  return rows.map((row) => ({
    seq: String(row.seq),
    id: row.id,
    topic: row.topic,
    key: row.key,
    errorCode: row.error_code,
    reason: row.reason,
    refusedAt: row.refused_at,
    size: row.size === null ? null : Number(row.size),
    held: Number(row.held),
  }));
}

/**
 * How many rows are set aside now, read from the database: what a relay's `onRefused` tells, seen also when the relay
 * died between its commit and the callback. `marks` names each (seq and refusal time), for telling new ones apart.
 */
export async function countRefused(
  db: Queryable,
  options: RefusedOptions = {},
): Promise<{ refused: number; marks: string[] }> {
  const { sql } = statements(options.schema);
  const { rows } = await db.query<{ n: number; marks: string[] }>(sql.count);
  return { refused: rows[0]?.n ?? 0, marks: rows[0]?.marks ?? [] };
}

async function release(db: Db, options: RefusedSelection, statement: 'retry' | 'discard'): Promise<number> {
  const { schema, sql } = statements(options.schema);
  return db.transaction(async (tx) => {
    const seqs = options.seqs ?? (await tx.query<{ seq: string }>(sql.all)).rows.map((row) => String(row.seq));
    if (seqs.length === 0) return 0;
    // The relays' shard locks (relay.ts): wait for a pass that owns these keys, keep the next one off until commit.
    await tx.query(sql.lock, [seqs, `effectively:relay:${schema}`]);
    const keys = (await tx.query<{ key: string }>(sql.keys, [seqs])).rows.map((row) => row.key);
    const { rows } = await tx.query<{ seq: string }>(sql[statement], [seqs]);
    // The rows a retry put back are written once (a second write of them streamed them twice to a WAL relay).
    const putBack = statement === 'retry' ? rows.map((row) => row.seq) : [];
    await tx.query(sql.restream, [keys, putBack]);
    await tx.query('SELECT pg_notify($1, NULL)', [notifyChannel(schema)]);
    return rows.length;
  });
}

/**
 * Puts refused rows back into the outbox at their own position (fix the cause first: the topic's
 * `max.message.bytes`, the topic itself...). The relay publishes each before the rows of its key held behind it; a row
 * refused again is set aside again. Returns how many rows went back.
 */
export function retryRefused(db: Db, options: RefusedSelection = {}): Promise<number> {
  return release(db, options, 'retry');
}

/** Drops refused rows for good (they are never published); the rows of their keys held behind them flow again. */
export function discardRefused(db: Db, options: RefusedSelection = {}): Promise<number> {
  return release(db, options, 'discard');
}
