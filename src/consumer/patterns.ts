import { assertIdentifier, assertQualifiedName } from '../db/identifiers.ts';
import type { Queryable } from '../db/port.ts';

/**
 * The idempotency patterns of the seeds, for use inside a handler's transaction. Table and column names are
 * validated identifiers; every value is a bound parameter.
 */

function columns(values: Record<string, unknown>): [string[], unknown[]] {
  const names = Object.keys(values).map((name) => assertIdentifier(name, 'column'));
  return [names, Object.values(values)];
}

export interface VersionGuardInput {
  table: string;
  /** Primary key column and value. */
  id: { column: string; value: unknown };
  /** The event's version: the row is updated only when its version is lower. */
  version: number;
  versionColumn?: string;
  set: Record<string, unknown>;
}

/** `UPDATE ... WHERE id = $1 AND version < $v`: an old event delivered late never overwrites a newer state. */
export async function versionGuard(tx: Queryable, input: VersionGuardInput): Promise<'applied' | 'stale'> {
  const table = assertQualifiedName(input.table);
  const idColumn = assertIdentifier(input.id.column, 'column');
  const versionColumn = assertIdentifier(input.versionColumn ?? 'version', 'column');
  const [names, values] = columns(input.set);
  const assignments = names.map((name, i) => `${name} = $${i + 3}`);
  assignments.push(`${versionColumn} = $2`);
  const result = await tx.query(
    `UPDATE ${table} SET ${assignments.join(', ')} WHERE ${idColumn} = $1 AND ${versionColumn} < $2`,
    [input.id.value, input.version, ...values],
  );
  return (result.rowCount ?? 0) > 0 ? 'applied' : 'stale';
}

export interface UpsertInput {
  table: string;
  /** The natural key columns and values. */
  key: Record<string, unknown>;
  values: Record<string, unknown>;
}

/** Natural-key upsert: applying it twice leaves the same state. */
export async function upsert(tx: Queryable, input: UpsertInput): Promise<void> {
  const table = assertQualifiedName(input.table);
  const [keyNames, keyValues] = columns(input.key);
  const [valueNames, values] = columns(input.values);
  const all = [...keyNames, ...valueNames];
  const placeholders = all.map((_, i) => `$${i + 1}`);
  const updates = valueNames.map((name) => `${name} = EXCLUDED.${name}`);
  const onConflict = updates.length > 0 ? `DO UPDATE SET ${updates.join(', ')}` : 'DO NOTHING';
  await tx.query(
    `INSERT INTO ${table} (${all.join(', ')}) VALUES (${placeholders.join(', ')}) ON CONFLICT (${keyNames.join(', ')}) ${onConflict}`,
    [...keyValues, ...values],
  );
}

export interface LedgerInput {
  table: string;
  /** Columns of the entry; one of them is unique (usually the event id), so a repeat inserts nothing. */
  entry: Record<string, unknown>;
}

/** Records a fact with an id instead of changing a total: `'duplicate'` when that fact was already recorded. */
export async function ledgerEntry(tx: Queryable, input: LedgerInput): Promise<'applied' | 'duplicate'> {
  const table = assertQualifiedName(input.table);
  const [names, values] = columns(input.entry);
  const result = await tx.query(
    `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT DO NOTHING`,
    values,
  );
  return (result.rowCount ?? 0) > 0 ? 'applied' : 'duplicate';
}
