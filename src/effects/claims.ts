import type { Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { storableText } from '../db/storable.ts';
import type { PendingEffect } from './provider.ts';

/** A claimed effect and the lease it was claimed under (only that lease records a failure). */
export interface Claimed extends PendingEffect {
  leaseId: string;
  /** The trace it was scheduled in (`traceparent`...), null without one. */
  traceContext: Record<string, string> | null;
}

interface ClaimRow extends Record<string, unknown> {
  id: string;
  key: string;
  kind: string;
  payload: unknown;
  attempts: number;
  in_doubt: boolean;
  created_at: Date;
  trace_context: Record<string, string> | null;
}

const files = {
  claim: 'claim.sql',
  unclaim: 'unclaim.sql',
  done: 'done.sql',
  retry: 'retry.sql',
  dead: 'dead.sql',
};

const maxError = 2000;

/** Text from a provider (an error, a reference) made storable: NUL in a text column failed every update, for ever. */
function clip(text: string): string {
  const storable = storableText(text);
  return storable.length > maxError ? `${storableText(storable.slice(0, maxError))}…` : storable;
}

/** The sender's statements on the effects table. Each runs alone: no transaction is held across a provider call. */
export function effectClaims(schema: string) {
  const sql = loadSqlSet(import.meta.url, files, schema);
  return {
    /** Claims up to `limit` due effects under a new lease of `leaseMs`. */
    async claim(
      db: Queryable,
      input: { limit: number; kinds: string[] | null; leaseId: string; leaseMs: number },
    ): Promise<Claimed[]> {
      const { rows } = await db.query<ClaimRow>(sql.claim, [input.limit, input.kinds, input.leaseId, input.leaseMs]);
      return rows.map((row) => ({
        id: row.id,
        key: row.key,
        kind: row.kind,
        payload: row.payload,
        attempts: row.attempts,
        inDoubt: row.in_doubt,
        createdAt: row.created_at,
        leaseId: input.leaseId,
        traceContext: row.trace_context,
      }));
    },
    async unclaim(db: Queryable, effect: Claimed): Promise<void> {
      await db.query(sql.unclaim, [effect.id, effect.leaseId]);
    },
    /** True when this recorded it; false when it was already settled (by another claim of the same effect). */
    async done(db: Queryable, effect: Claimed, reference: string | null): Promise<boolean> {
      const result = await db.query(sql.done, [effect.id, reference === null ? null : clip(reference)]);
      return (result.rowCount ?? 0) > 0;
    },
    async retry(
      db: Queryable,
      effect: Claimed,
      input: { delayMs: number; inDoubt: boolean; code: string; error: string },
    ): Promise<boolean> {
      const result = await db.query(sql.retry, [
        effect.id,
        effect.leaseId,
        Math.max(0, Math.round(input.delayMs)),
        input.inDoubt,
        clip(input.code),
        clip(input.error),
      ]);
      return (result.rowCount ?? 0) > 0;
    },
    async dead(
      db: Queryable,
      effect: Claimed,
      input: { code: string; error: string; inDoubt: boolean },
    ): Promise<boolean> {
      const { id, leaseId } = effect;
      const result = await db.query(sql.dead, [id, leaseId, clip(input.code), clip(input.error), input.inDoubt]);
      return (result.rowCount ?? 0) > 0;
    },
  };
}

export type EffectClaims = ReturnType<typeof effectClaims>;
