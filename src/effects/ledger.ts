import { librarySchema } from '../db/identifiers.ts';
import type { Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { uuidv7 } from '../envelope/uuidv7.ts';
import { invalidOptions } from '../errors.ts';
import { activeTraceHeaders } from '../observability/tracing.ts';

export type EffectStatus = 'pending' | 'done' | 'dead' | 'cancelled';

/** A row of the effects ledger. */
export interface Effect {
  /** Also the idempotency key of every call for it. */
  id: string;
  key: string;
  kind: string;
  payload: unknown;
  status: EffectStatus;
  attempts: number;
  nextAttemptAt: Date;
  inDoubt: boolean;
  /** The code of the last failure (`EFF_PROVIDER_*`), null once done. */
  lastCode: string | null;
  lastError: string | null;
  /** The provider's own id for what it did (a message id). */
  providerRef: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ScheduleInput {
  /** The business key (an order id): one effect per (key, kind), however often it is scheduled. */
  key: string;
  /** What to do for it (`email:confirmation`): senders pick the kinds they perform. */
  kind: string;
  /** Whatever the provider needs, as JSON. The first schedule's payload wins; later ones change nothing. */
  payload: unknown;
  /** Not sent before this (default: at once). */
  notBefore?: Date;
}

export interface EffectFilter {
  ids?: string[];
  status?: EffectStatus;
  kind?: string;
  key?: string;
  /** Most rows (default 1000). */
  limit?: number;
}

export interface EffectsOptions {
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
}

export interface Effects {
  /**
   * Schedules an effect in the caller's transaction (the handler's): it will be performed if and only if that
   * transaction commits. Returns the effect's id; the same (key, kind) again returns the first one's id.
   */
  schedule(tx: Queryable, input: ScheduleInput): Promise<string>;
  list(db: Queryable, filter?: EffectFilter): Promise<Effect[]>;
  /** How many effects have `status` (for an alert: `count(db, 'dead')`), optionally of one kind. */
  count(db: Queryable, status: EffectStatus, kind?: string): Promise<number>;
  /** Gives dead effects another round with the same id (so the same idempotency key); returns how many. */
  revive(db: Queryable, ids: string[]): Promise<number>;
  /**
   * Cancels effects that were not performed: dead ones and pending ones no sender holds right now (one under a live
   * claim is skipped: cancel it again once its outcome is recorded). Returns the ids cancelled and, among them, those
   * in doubt (an earlier call may have reached the provider).
   */
  cancel(db: Queryable, ids: string[]): Promise<{ cancelled: string[]; inDoubt: string[] }>;
  /**
   * Deletes done and cancelled effects last changed more than `olderThanMs` ago, in chunks; returns how many. A purged
   * (key, kind) can be scheduled again and would then be performed again: keep `olderThanMs` at least the consumers'
   * dedup retention (past it a redelivered event is applied again anyway).
   */
  purge(db: Queryable, options: { olderThanMs: number; chunk?: number }): Promise<number>;
}

interface Row extends Record<string, unknown> {
  id: string;
  key: string;
  kind: string;
  payload: unknown;
  status: EffectStatus;
  attempts: number;
  next_attempt_at: Date;
  in_doubt: boolean;
  last_code: string | null;
  last_error: string | null;
  provider_ref: string | null;
  created_at: Date;
  updated_at: Date;
}

const files = {
  schedule: 'schedule.sql',
  find: 'find.sql',
  list: 'list.sql',
  count: 'count.sql',
  revive: 'revive.sql',
  cancel: 'cancel.sql',
  purge: 'purge.sql',
};

function toEffect(row: Row): Effect {
  return {
    id: row.id,
    key: row.key,
    kind: row.kind,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    inDoubt: row.in_doubt,
    lastCode: row.last_code,
    lastError: row.last_error,
    providerRef: row.provider_ref,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The effects ledger in the library's schema (table `effects`, migration 005). */
export function createEffects(options: EffectsOptions = {}): Effects {
  const sql = loadSqlSet(import.meta.url, files, librarySchema(options.schema));
  return {
    async schedule(tx, input) {
      if (typeof input.key !== 'string' || input.key === '') throw invalidOptions('key', 'a non-empty string');
      if (typeof input.kind !== 'string' || input.kind === '') throw invalidOptions('kind', 'a non-empty string');
      if (input.payload === undefined) throw invalidOptions('payload', 'a JSON value');
      if (input.notBefore !== undefined && Number.isNaN(input.notBefore.getTime())) {
        throw invalidOptions('notBefore', 'a valid Date');
      }
      // Scheduled inside a consumer's handler: the `process` span's context, for the sender's call to join its trace.
      const trace = activeTraceHeaders();
      const payload = JSON.stringify(input.payload);
      const params = [
        uuidv7(),
        input.key,
        input.kind,
        payload,
        input.notBefore ?? null,
        trace && JSON.stringify(trace),
      ];
      const { rows } = await tx.query<{ id: string }>(sql.schedule, params);
      if (rows[0]) return rows[0].id;
      // A concurrent transaction committed the same (key, kind) after this statement's snapshot: read it now.
      const again = await tx.query<{ id: string }>(sql.find, [input.key, input.kind]);
      return again.rows[0]!.id;
    },
    async list(db, filter = {}) {
      const { rows } = await db.query<Row>(sql.list, [
        filter.ids ?? null,
        filter.status ?? null,
        filter.kind ?? null,
        filter.key ?? null,
        filter.limit ?? 1000,
      ]);
      return rows.map(toEffect);
    },
    async count(db, status, kind) {
      const { rows } = await db.query<{ n: number }>(sql.count, [status, kind ?? null]);
      return Number(rows[0]?.n ?? 0);
    },
    async revive(db, ids) {
      if (ids.length === 0) return 0;
      const result = await db.query(sql.revive, [ids]);
      return result.rowCount ?? 0;
    },
    async cancel(db, ids) {
      if (ids.length === 0) return { cancelled: [], inDoubt: [] };
      const { rows } = await db.query<{ id: string; in_doubt: boolean }>(sql.cancel, [ids]);
      return { cancelled: rows.map((row) => row.id), inDoubt: rows.filter((row) => row.in_doubt).map((row) => row.id) };
    },
    async purge(db, { olderThanMs, chunk = 10_000 }) {
      if (!(Number.isSafeInteger(olderThanMs) && olderThanMs >= 0)) throw invalidOptions('olderThanMs', 'ms ≥ 0');
      if (!(Number.isSafeInteger(chunk) && chunk > 0)) throw invalidOptions('chunk', 'a positive integer');
      let purged = 0;
      for (;;) {
        const result = await db.query(sql.purge, [olderThanMs, chunk]);
        purged += result.rowCount ?? 0;
        if ((result.rowCount ?? 0) < chunk) return purged;
      }
    },
  };
}
