import { assertIdentifier } from '../db/identifiers.ts';
import type { Db, Queryable } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { invalidOptions } from '../errors.ts';

/**
 * The outbox's shard count is stored in the schema's `settings` at the first enqueue or relay start; a writer or relay
 * configured with another count is refused (a relay with fewer shards would never publish the higher ones, and two
 * counts at once would put one key in two shards, with no order between them).
 */
export function shardsMismatch(schema: string, configured: number, stored: string) {
  return invalidOptions(
    'shards',
    `${configured} differs from the ${stored} shards schema ${schema} was started with; every writer and relay of ` +
      'one schema must use the same count (change it only with changeShards, once the outbox is empty)',
  );
}

/** Stores `shards` if the schema has no count yet; throws EFF_INVALID_OPTIONS when it has another one. */
export async function ensureShards(db: Queryable, schema: string, shards: number): Promise<void> {
  const sql = loadSqlSet(import.meta.url, { ensure: 'shards-setting.sql', stored: 'shards-stored.sql' }, schema);
  let { rows } = await db.query<{ value: string }>(sql.ensure, [shards]);
  // A first writer that raced us committed after our statement's snapshot: read its value now.
  if (rows.length === 0) rows = (await db.query<{ value: string }>(sql.stored)).rows;
  const stored = rows[0]?.value;
  if (stored !== undefined && stored !== String(shards)) throw shardsMismatch(schema, shards, stored);
}

/**
 * Changes the stored shard count, for a deploy that changes `shards` everywhere: only while the outbox holds no row
 * (and none is set aside), so no key's rows end up in two shards. Writers and relays still on the old count are
 * refused from then on.
 */
export async function changeShards(db: Db, options: { schema?: string; shards: number }): Promise<void> {
  const schema = assertIdentifier(options.schema ?? 'effectively', 'schema');
  const { shards } = options;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw invalidOptions('shards', 'an integer in 1..1024');
  const sql = loadSqlSet(import.meta.url, { change: 'shards-change.sql' }, schema);
  await db.transaction(async (tx) => {
    // Writers wait (their INSERT needs ROW EXCLUSIVE) until the new count is committed, then are checked against it.
    await tx.query(`LOCK TABLE ${schema}.outbox, ${schema}.outbox_refused IN SHARE MODE`);
    const { rows } = await tx.query<{ waiting: string }>(sql.change, [shards]);
    const waiting = Number(rows[0]?.waiting ?? 0);
    if (waiting > 0) {
      throw invalidOptions('shards', `schema ${schema} still has ${waiting} outbox rows: drain the outbox first`);
    }
  });
}
