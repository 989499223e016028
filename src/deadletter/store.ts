import { librarySchema } from '../db/identifiers.ts';
import type { Db, Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { decodeHeaders, encodeHeaders, storableText } from '../db/storable.ts';
import { eventIdOfRecord, eventSourceOfRecord } from '../envelope/cloudevents.ts';
import { EffectivelyError, ErrorCodes, invalidOptions } from '../errors.ts';
import { awaitCallBack } from '../observability/callback.ts';
import type { FaultInjector } from '../observability/faults.ts';
import { stderrLogger } from '../observability/logger.ts';
import { keyText, keyToSend } from '../transport/key.ts';
import type { IncomingRecord, Producer } from '../transport/port.ts';

export type DeadLetterStatus = 'dead' | 'redriven' | 'discarded';

/** A record a consumer gave up on, kept whole (headers, key, bytes) with why and how often it failed. */
export interface DeadLetter {
  id: string;
  consumer: string;
  topic: string;
  partition: number;
  offset: string;
  /** The event's CloudEvents id as the record carries it (any non-empty string), when it had a valid one. */
  eventId: string | null;
  /** The event's CloudEvents `source`, when it had one: with the id, the event's identity. */
  source: string | null;
  /**
   * The dedup key the consumer claims for the event (column `event_id`): the id itself when it is a UUID, otherwise
   * a UUIDv5 over source + id (see docs/cloudevents.md); null without a valid id.
   */
  dedupKey: string | null;
  /** The key as text, or null when it has none or it is not text (then see `keyBytes`). */
  key: string | null;
  /** The key's bytes as the record came with them. */
  keyBytes: Buffer | null;
  headers: Record<string, Buffer>;
  payload: Buffer | null;
  code: string;
  reason: string;
  attempts: number;
  firstFailedAt: Date;
  lastFailedAt: Date;
  status: DeadLetterStatus;
}

export interface DeadLetterFilter {
  consumer?: string;
  topic?: string;
  code?: string;
  ids?: string[];
  status?: DeadLetterStatus;
  /** Only those that first failed at or after this time. */
  since?: Date;
  /** Only those that first failed before this time. */
  until?: Date;
  /** Most rows (default 1000). */
  limit?: number;
}

export interface RedriveOptions {
  /** List what would be redriven; send nothing. */
  dryRun?: boolean;
  /** Dead letters sent and marked per step (default 500): an interrupted redrive resumes after the last marked step. */
  chunkSize?: number;
  /** About the most payload bytes per step (default 32 MiB; a single larger letter goes alone). */
  chunkBytes?: number;
  /** Redrive even dead letters older than their group's dedup retention (see `EFF_REDRIVE_BEYOND_RETENTION`). */
  force?: boolean;
  /** Called (and awaited) after each step with how many are done out of how many. */
  onProgress?: (done: number, total: number) => void | Promise<void>;
  /** Stops between steps: what was marked stays marked, the rest stays dead for the next run. */
  signal?: AbortSignal;
  /** Testing only: named crash points. */
  faults?: FaultInjector;
}

interface Row extends Record<string, unknown> {
  id: string;
  consumer: string;
  topic: string;
  partition: number;
  offset: string;
  event_id: string | null;
  key: string | null;
  key_bytes: Buffer | null;
  headers: Record<string, string>;
  payload: Buffer | null;
  code: string;
  reason: string;
  attempts: number;
  first_failed_at: Date;
  last_failed_at: Date;
  status: DeadLetterStatus;
}

const files = {
  insert: 'insert.sql',
  list: 'list.sql',
  mark: 'mark.sql',
  discard: 'discard.sql',
  beyondRetention: 'beyond-retention.sql',
  eventTimes: 'event-times.sql',
  sizes: 'sizes.sql',
  listIds: 'list-ids.sql',
  lockDead: 'lock-dead.sql',
  givenUp: 'given-up.sql',
};
/** Ids read per query when a redrive lists what it will take. */
const idPage = 10_000;
const maxReason = 2000;

/** A `ce_time` header kept base64: ms since the epoch, or null when absent or unreadable. */
function eventTime(stored: string | null): number | null {
  if (stored === null) return null;
  const ms = Date.parse(Buffer.from(stored, 'base64').toString('utf8'));
  return Number.isFinite(ms) ? ms : null;
}

function codeOf(error: unknown): string {
  return error instanceof EffectivelyError ? error.code : ErrorCodes.EFF_HANDLER_FAILED;
}

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > maxReason ? `${text.slice(0, maxReason)}…` : text;
}

function toLetter(row: Row): DeadLetter {
  const headers = decodeHeaders(row.headers);
  // The id and source are read from the record as it was kept (headers or structured value), never rewritten.
  const kept: IncomingRecord = {
    topic: row.topic,
    partition: row.partition,
    offset: row.offset,
    key: row.key_bytes,
    value: row.payload,
    headers,
    timestamp: 0,
  };
  return {
    id: row.id,
    consumer: row.consumer,
    topic: row.topic,
    partition: row.partition,
    offset: row.offset,
    eventId: eventIdOfRecord(kept) ?? row.event_id,
    source: eventSourceOfRecord(kept),
    dedupKey: row.event_id,
    key: row.key,
    keyBytes: row.key_bytes,
    headers,
    payload: row.payload,
    code: row.code,
    reason: row.reason,
    attempts: row.attempts,
    firstFailedAt: row.first_failed_at,
    lastFailedAt: row.last_failed_at,
    status: row.status,
  };
}

/**
 * What a redrive takes: dead letters, or with `status: 'redriven'` letters redriven before (sent where no consumer
 * reads them, say: the consumers' dedup rows make a second redrive safe). Discarded ones are a decision, never redriven.
 */
function redrivable(filter: DeadLetterFilter): DeadLetterStatus {
  if (filter.status === 'discarded') throw invalidOptions('status', 'dead or redriven for a redrive, not discarded');
  return filter.status ?? 'dead';
}

const isDb = (db: Queryable | Db): db is Db => typeof (db as Db).transaction === 'function';

/** Runs `work` in a transaction when `db` can open one (a plain `Queryable` runs it as it is). */
const inTransaction = <T>(db: Queryable | Db, work: (tx: Queryable) => Promise<T>): Promise<T> =>
  isDb(db) ? db.transaction(work) : work(db);

/** The dead-letter store in the library's schema: keep, list, redrive (same event id) and discard. */
export function deadLetterStore(options: { schema?: string } = {}) {
  const sql = loadSqlSet(import.meta.url, files, librarySchema(options.schema));

  async function list(db: Queryable, filter: DeadLetterFilter = {}): Promise<DeadLetter[]> {
    const { rows } = await db.query<Row>(sql.list, [
      filter.status ?? 'dead',
      filter.consumer ?? null,
      filter.topic ?? null,
      filter.code ?? null,
      filter.ids ?? null,
      filter.limit ?? 1000,
      filter.since ?? null,
      filter.until ?? null,
    ]);
    return rows.map(toLetter);
  }

  /** The letters among `ids` older than a group's dedup retention, aged from their event's own time (see the SQL). */
  async function beyondRetention(db: Queryable, ids: string[]): Promise<{ id: string; keep_ms: string }[]> {
    const { rows: times } = await db.query<{ id: string; time: string | null }>(sql.eventTimes, [ids]);
    const eventMs = new Map(times.map((row) => [row.id, eventTime(row.time)]));
    const { rows } = await db.query<{ id: string; keep_ms: string }>(sql.beyondRetention, [
      ids,
      ids.map((id) => eventMs.get(id) ?? null),
    ]);
    return rows;
  }

  /** `ids` in order, cut into steps of at most `count` letters and about `bytes` payload bytes (one at least). */
  async function steps(db: Queryable, ids: string[], count: number, bytes: number): Promise<string[][]> {
    const { rows } = await db.query<{ id: string; size: number }>(sql.sizes, [ids]);
    const size = new Map(rows.map((row) => [row.id, Number(row.size)]));
    const chunks: string[][] = [];
    let current: string[] = [];
    let held = 0;
    for (const id of ids) {
      if (current.length > 0 && (current.length >= count || held >= bytes)) {
        chunks.push(current);
        current = [];
        held = 0;
      }
      current.push(id);
      held += size.get(id) ?? 0;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }

  /** The ids of the letters `filter` matches (dead unless it says redriven), oldest first, a page at a time. */
  async function deadIds(db: Queryable, filter: DeadLetterFilter): Promise<string[]> {
    const limit = filter.limit ?? 1_000_000;
    const ids: string[] = [];
    let after = '0';
    while (ids.length < limit) {
      const page = Math.min(idPage, limit - ids.length);
      const { rows } = await db.query<{ id: string }>(sql.listIds, [
        redrivable(filter),
        filter.consumer ?? null,
        filter.topic ?? null,
        filter.code ?? null,
        filter.ids ?? null,
        page,
        filter.since ?? null,
        filter.until ?? null,
        after,
      ]);
      for (const row of rows) ids.push(row.id);
      if (rows.length < page) break;
      after = rows.at(-1)!.id;
    }
    return ids;
  }

  /**
   * One chunk, in its transaction: the letters still dead are locked (a discard decided since the redrive started is
   * seen; one running now waits), sent, and marked. A transport living in this database appends in the same
   * transaction (sent and marked in one commit); another one sends while the rows are locked, and a crash before the
   * commit only sends the chunk once more, absorbed by the consumers' dedup rows.
   */
  async function redriveChunk(
    db: Queryable | Db,
    tx: Queryable,
    producer: Producer,
    ids: string[],
    status: DeadLetterStatus,
    options: RedriveOptions,
  ): Promise<DeadLetter[]> {
    const { rows } = await tx.query<Row>(sql.lockDead, [ids, status]);
    if (rows.length === 0) return [];
    const letters = rows.map(toLetter);
    const records = letters.map((letter) => ({
      topic: letter.topic,
      key: letter.keyBytes ? keyToSend(letter.keyBytes) : letter.key,
      value: letter.payload,
      headers: letter.headers,
    }));
    if (producer.sendWithin && isDb(db) && producer.usesDb?.(db)) await producer.sendWithin(tx, records);
    else await producer.send(records);
    await options.faults?.('redrive:after-send');
    await tx.query(sql.mark, [letters.map((letter) => letter.id), 'redriven', status]);
    return letters;
  }

  return {
    /** Keeps `record` as dead; returns its id, or undefined when that record was already kept. */
    async keep(
      tx: Queryable,
      input: {
        consumer: string;
        record: IncomingRecord;
        /** The event's dedup key (`eventKeyOfRecord`), kept in the uuid column `event_id`; the id stays in the record. */
        eventId: string | null;
        error: unknown;
        attempts: number;
        firstFailedAt: Date;
        /** The code and reason when they come from elsewhere than `error` (a dead-letter topic's headers). */
        code?: string;
        reason?: string;
      },
    ): Promise<string | undefined> {
      const { record } = input;
      const { rows } = await tx.query<{ id: string }>(sql.insert, [
        input.consumer,
        record.topic,
        record.partition,
        record.offset,
        input.eventId,
        keyText(record.key),
        encodeHeaders(record.headers),
        record.value,
        storableText(input.code ?? codeOf(input.error)).slice(0, 200),
        storableText(input.reason ?? reasonOf(input.error)),
        input.attempts,
        input.firstFailedAt,
        record.key,
      ]);
      return rows[0]?.id;
    },

    list,

    /**
     * The records `consumer` gave up on in `partition` from offset `from` on (dead or discarded; redriven ones went out
     * again), as offset → dedup key in offset order, at most `limit` (default 1,000) of them; `complete` when there are
     * no more. Those without a dedup key are left out.
     */
    async givenUpFrom(
      db: Queryable,
      position: { consumer: string; topic: string; partition: number; from: string; limit?: number },
    ): Promise<{ letters: Map<string, string>; complete: boolean }> {
      const { consumer, topic, partition, from, limit = 1000 } = position;
      const { rows } = await db.query<{ offset: string; event_id: string }>(sql.givenUp, [
        consumer,
        topic,
        partition,
        from,
        limit,
      ]);
      return { letters: new Map(rows.map((row) => [row.offset, row.event_id])), complete: rows.length < limit };
    },

    /**
     * Republishes dead letters to their original topic, unchanged (same key, headers and event id), chunk by chunk:
     * each chunk is sent, then marked redriven. Anything already applied is absorbed by the consumers' dedup rows; a
     * crash between a send and its mark only sends that chunk once more, absorbed the same way, and running the same
     * redrive again resumes with the letters still dead. `filter.status: 'redriven'` redrives letters redriven before
     * once more (sent where no consumer reads, say). Refuses, unless `force`, letters older than their group's dedup
     * retention (`EFF_REDRIVE_BEYOND_RETENTION`).
     */
    async redrive(
      db: Queryable | Db,
      producer: Producer,
      filter: DeadLetterFilter = {},
      options: RedriveOptions = {},
    ): Promise<DeadLetter[]> {
      // Every matching letter unless told a limit: their ids only here, the rows are read chunk by chunk.
      const ids = await deadIds(db, filter);
      if (!options.force && ids.length > 0) {
        const rows = await beyondRetention(db, ids);
        if (rows.length > 0) {
          throw new EffectivelyError(
            ErrorCodes.EFF_REDRIVE_BEYOND_RETENTION,
            `${rows.length} dead letter(s) were written longer ago than a consumer group keeps dedup rows (${rows[0]!.keep_ms} ms): ` +
              `a replay the dedup table no longer covers could apply them twice; check they were never applied, then force`,
            { details: { ids: rows.map((row) => row.id) } },
          );
        }
      }
      const status = redrivable(filter);
      if (options.dryRun) return ids.length === 0 ? [] : list(db, { ids, limit: ids.length, status });
      const done: DeadLetter[] = [];
      const chunks = await steps(db, ids, options.chunkSize ?? 500, options.chunkBytes ?? 32 * 1024 * 1024);
      let sent = 0;
      for (const chunk of chunks) {
        if (options.signal?.aborted) break;
        done.push(...(await inTransaction(db, (tx) => redriveChunk(db, tx, producer, chunk, status, options))));
        sent += chunk.length;
        // The step is committed: a progress report that fails is its own failure, not the redrive's.
        await awaitCallBack(stderrLogger, 'onProgress', options.onProgress, [sent, ids.length]);
      }
      return done;
    },

    /**
     * Marks dead letters discarded: a decision taken, not a loss in silence. Keys they held (key-ordered consumers) are
     * released, so what was parked behind them is applied.
     */
    async discard(db: Queryable, ids: string[]): Promise<number> {
      const { rows } = await db.query<{ discarded: number }>(sql.discard, [ids]);
      return rows[0]?.discarded ?? 0;
    },
  };
}

export type DeadLetterStore = ReturnType<typeof deadLetterStore>;
