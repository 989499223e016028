// The WAL relay's replication slot and publication: what the server can do, the slot's state and lag, and its end.
import { assertIdentifier } from '../../db/identifiers.ts';
import type { Queryable } from '../../db/port.ts';
import { loadSql } from '../../db/sql.ts';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

/** The slot and publication names of a schema's outbox (63 characters at most, PostgreSQL's limit). */
export function walNames(schema: string, slot?: string): { slot: string; publication: string } {
  const base = `effectively_outbox_${schema}`.slice(0, 63);
  return { slot: assertIdentifier(slot ?? base, 'slot'), publication: base };
}

export interface SlotState {
  walStatus: string | null;
  activePid: number | null;
  confirmed: string | null;
  /** Bytes the server wrote since the slot's confirmed position. */
  lagBytes: number;
  /** Bytes of WAL the slot keeps from being recycled. */
  retainedBytes: number;
}

export async function slotState(db: Queryable, slot: string): Promise<SlotState | undefined> {
  const { rows } = await db.query<{
    wal_status: string | null;
    active_pid: number | null;
    confirmed: string | null;
    lag_bytes: string | null;
    retained_bytes: string | null;
  }>(loadSql(import.meta.url, 'wal-slot.sql', 'public'), [slot]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    walStatus: row.wal_status,
    activePid: row.active_pid,
    confirmed: row.confirmed,
    lagBytes: Number(row.lag_bytes ?? 0),
    retainedBytes: Number(row.retained_bytes ?? 0),
  };
}

/** Throws EFF_WAL_UNAVAILABLE, saying what is missing, when the server cannot stream logical changes to this role. */
export async function assertLogicalReplication(db: Queryable): Promise<void> {
  const { rows } = await db.query<{
    wal_level: string;
    max_slots: number;
    max_senders: number;
    can_replicate: boolean | null;
  }>(loadSql(import.meta.url, 'wal-server.sql', 'public'));
  const server = rows[0]!;
  const missing: string[] = [];
  if (server.wal_level !== 'logical') missing.push(`wal_level is ${server.wal_level}, not logical`);
  if (server.max_slots < 1) missing.push('max_replication_slots is 0');
  if (server.max_senders < 1) missing.push('max_wal_senders is 0');
  if (!server.can_replicate) missing.push('the role has no REPLICATION attribute');
  if (missing.length === 0) return;
  throw new EffectivelyError(
    ErrorCodes.EFF_WAL_UNAVAILABLE,
    `this PostgreSQL server cannot stream the outbox from its write-ahead log: ${missing.join('; ')}. Set ` +
      'wal_level = logical (a restart), max_replication_slots and max_wal_senders >= 1 and grant REPLICATION, or ' +
      "run the relay with source: 'poll' (or fallback: 'poll' to do so when the server cannot)",
    { details: { walLevel: server.wal_level, canReplicate: server.can_replicate === true } },
  );
}

/** A slot PostgreSQL invalidated: the WAL it needed is gone. Loud, coded, with the way back. */
export function slotInvalidated(slot: string, schema: string, cause?: unknown): EffectivelyError {
  return new EffectivelyError(
    ErrorCodes.EFF_WAL_SLOT_INVALIDATED,
    `replication slot ${slot} was invalidated by PostgreSQL (it held more WAL than max_slot_wal_keep_size allows); ` +
      'no event is lost: every row not acknowledged by the broker is still in the outbox table. To recover, drop ' +
      `the slot (SELECT pg_drop_replication_slot('${slot}'), or dropWalSlot(db, { schema: '${schema}' })) ` +
      'and start the relay again: it makes a new slot and publishes the waiting rows from the table first',
    { details: { slot, schema }, ...(cause === undefined ? {} : { cause }) },
  );
}

/** Creates the outbox's publication (inserts only) when it is missing. */
export async function ensurePublication(db: Queryable, schema: string, publication: string): Promise<void> {
  const { rows } = await db.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [publication]);
  if (rows.length > 0) return;
  await db
    .query(
      `CREATE PUBLICATION ${assertIdentifier(publication)} FOR TABLE ${assertIdentifier(schema)}.outbox ` +
        "WITH (publish = 'insert')",
    )
    .catch((error: { code?: string }) => {
      if (error.code !== '42710') throw error; // created meanwhile by another relay
    });
}

/** The settings row that says a slot's first catch-up from the table is done. */
export const readyMark = (slot: string) => `wal.slot.${slot}`;

/**
 * Drops the slot (when no relay streams from it) and its mark. Run it when a WAL relay is retired for good: an
 * abandoned slot keeps every later WAL segment on the server's disk.
 */
export async function dropWalSlot(db: Queryable, options: { schema: string; slot?: string }): Promise<boolean> {
  const { slot } = walNames(options.schema, options.slot);
  const { rows } = await db.query<{ dropped: boolean }>(
    `SELECT pg_drop_replication_slot(slot_name) IS NULL AS dropped
       FROM pg_replication_slots WHERE slot_name = $1`,
    [slot],
  );
  await db.query(`DELETE FROM ${assertIdentifier(options.schema)}.settings WHERE name = $1`, [readyMark(slot)]);
  return rows.length > 0;
}
