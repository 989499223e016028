// The dead letters as the console shows them: a list with filters and a payload search, and one letter whole, with
// whether its event was applied after all (the dedup rows) and the effects of its key (the effects ledger).
import type { Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { type DeadLetter, type DeadLetterStatus, deadLetterStore } from '../deadletter/store.ts';
import { createEffects } from '../effects/ledger.ts';
import { failureCause } from './fingerprint.ts';

export interface LetterQuery {
  status?: DeadLetterStatus;
  consumer?: string;
  topic?: string;
  code?: string;
  /** Text the payload contains (its UTF-8 bytes). */
  search?: string;
  /** Only the letters of this failure group. */
  fingerprint?: string;
  limit?: number;
}

/** A header's bytes as text when they are UTF-8, else as base64 (said so). */
function headerText(value: Buffer): string {
  const text = value.toString('utf8');
  return Buffer.from(text, 'utf8').equals(value) ? text : `base64:${value.toString('base64')}`;
}

/** The event type a letter carries (`ce_type` in binary mode, `type` in a structured value), when it has one. */
export function eventTypeOf(letter: DeadLetter): string | null {
  const header = letter.headers.ce_type;
  if (header) return header.toString('utf8');
  try {
    const value = JSON.parse(letter.payload?.toString('utf8') ?? 'null') as { type?: unknown } | null;
    return typeof value?.type === 'string' ? value.type : null;
  } catch {
    return null;
  }
}

/** A letter as the list shows it (JSON: strings, never markup). */
export function letterSummary(letter: DeadLetter) {
  const cause = failureCause(letter);
  return {
    id: letter.id,
    consumer: letter.consumer,
    topic: letter.topic,
    partition: letter.partition,
    offset: letter.offset,
    eventId: letter.eventId,
    eventType: eventTypeOf(letter),
    key: letter.key ?? (letter.keyBytes ? `base64:${letter.keyBytes.toString('base64')}` : null),
    code: letter.code,
    reason: letter.reason,
    attempts: letter.attempts,
    firstFailedAt: letter.firstFailedAt,
    lastFailedAt: letter.lastFailedAt,
    status: letter.status,
    fingerprint: cause.fingerprint,
    errorClass: cause.errorClass,
  };
}

export function letterReader(db: Queryable, schema: string) {
  const store = deadLetterStore({ schema });
  const effects = createEffects({ schema });
  const sql = loadSqlSet(
    import.meta.url,
    { search: 'letters-search.sql', status: 'letter-status.sql', applied: 'applied.sql' },
    schema,
  );

  /** The letters matching `query`, newest first, whole. */
  async function find(query: LetterQuery): Promise<DeadLetter[]> {
    const limit = Math.min(query.limit ?? 200, 5000);
    const status = query.status ?? 'dead';
    // a fingerprint is computed, not stored: read more and keep those of the group
    const read = query.fingerprint ? 5000 : limit;
    const { rows } = await db.query<{ id: string }>(sql.search, [
      status,
      query.consumer ?? null,
      query.topic ?? null,
      query.code ?? null,
      query.search ? Buffer.from(query.search, 'utf8') : null,
      read,
    ]);
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const letters = (await store.list(db, { ids, status, limit: ids.length })).reverse();
    const kept = query.fingerprint
      ? letters.filter((letter) => failureCause(letter).fingerprint === query.fingerprint)
      : letters;
    return kept.slice(0, limit);
  }

  /** One letter whole, or undefined when no letter has that id. */
  async function detail(id: string) {
    if (!/^\d{1,18}$/.test(id)) return undefined;
    const { rows } = await db.query<{ status: DeadLetterStatus }>(sql.status, [id]);
    const status = rows[0]?.status;
    if (!status) return undefined;
    const [letter] = await store.list(db, { ids: [id], status, limit: 1 });
    if (!letter) return undefined;
    const applied = letter.dedupKey
      ? (await db.query<{ consumer: string; processed_at: Date }>(sql.applied, [letter.dedupKey])).rows
      : [];
    const ledger = letter.key ? await effects.list(db, { key: letter.key, limit: 50 }) : [];
    return {
      ...letterSummary(letter),
      source: letter.source,
      dedupKey: letter.dedupKey,
      cause: failureCause(letter),
      payload: letter.payload === null ? null : letter.payload.toString('utf8'),
      payloadBase64: letter.payload === null ? null : letter.payload.toString('base64'),
      headers: Object.fromEntries(Object.entries(letter.headers).map(([name, value]) => [name, headerText(value)])),
      applied: {
        /** True when the letter's own group applied the event after all (a redrive would be absorbed). */
        byItsGroup: applied.some((row) => row.consumer === letter.consumer),
        groups: applied.map((row) => ({ consumer: row.consumer, at: row.processed_at })),
      },
      effects: ledger.map((effect) => ({
        id: effect.id,
        kind: effect.kind,
        status: effect.status,
        attempts: effect.attempts,
        lastCode: effect.lastCode,
        lastError: effect.lastError,
        updatedAt: effect.updatedAt,
      })),
    };
  }

  return { find, detail };
}

export type LetterReader = ReturnType<typeof letterReader>;
