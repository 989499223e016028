import { librarySchema } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import { invalidOptions } from '../errors.ts';

/**
 * The outbox's shard count is stored in the schema's `settings` when the first relay starts; a relay or writer
 * configured with another count is refused (a relay with fewer shards would never publish the higher ones, and two
 * counts at once would put one key in two shards, with no order between them). Writers only check: storing it from a
 * writer would hold the new settings row locked until the caller's transaction ends, and every other writer and relay
 * of the schema would wait for it.
 */
export function shardsMismatch(schema: string, configured: number, stored: string) {
  return invalidOptions(
    'shards',
    `${configured} differs from the ${stored} shards schema ${schema} was started with; every writer and relay of ` +
      'one schema must use the same count (change it only with changeShards, once the outbox is empty)',
  );
}

/**
 * At a relay's start: stores `shards` if the schema has no count yet (refused when the outbox already holds rows of a
 * higher shard, written by a writer with more shards); throws EFF_INVALID_OPTIONS when it has another count.
 */
export async function ensureShards(db: Db, schema: string, shards: number): Promise<void> {
  const sql = loadSqlSet(
    import.meta.url,
    { ensure: 'shards-setting.sql', stored: 'shards-stored.sql', highest: 'shards-highest.sql' },
    schema,
  );
  await db.transaction(async (tx) => {
    const { rows: highest } = await tx.query<{ shard: number | null }>(sql.highest);
    const beyond = highest[0]?.shard;
    let { rows } = await tx.query<{ value: string }>(sql.ensure, [shards]);
    // Another relay stored its count after our statement's snapshot: read it now.
    if (rows.length === 0) rows = (await tx.query<{ value: string }>(sql.stored)).rows;
    const stored = rows[0]?.value;
    if (stored !== undefined && stored !== String(shards)) throw shardsMismatch(schema, shards, stored);
    if (beyond !== null && beyond !== undefined && beyond >= shards) {
      throw shardsMismatch(schema, shards, `${beyond + 1} or more`);
    }
  });
}

/**
 * Changes the stored shard count, for a deploy that changes `shards` everywhere: only while the outbox holds no row
 * (and none is set aside), so no key's rows end up in two shards. Writers and relays still on the old count are
 * refused from then on.
 */
export async function changeShards(db: Db, options: { schema?: string; shards: number }): Promise<void> {
  const schema = librarySchema(options.schema);
  const { shards } = options;
  if (!Number.isInteger(shards) || shards < 1 || shards > 1024) throw invalidOptions('shards', 'an integer in 1..1024');
  const sql = loadSqlSet(import.meta.url, { change: 'shards-change.sql' }, schema);
  await db.transaction(async (tx) => {
    // Writers wait (their INSERT needs ROW EXCLUSIVE) until the new count is committed, then are checked against it:
    // at read committed their statement's snapshot is taken after the wait; at repeatable read or serializable their
    // snapshot may be older, and enqueue.sql reads the count FOR SHARE, which fails with 40001 once this commits.
    await tx.query(`LOCK TABLE ${schema}.outbox, ${schema}.outbox_refused IN SHARE MODE`);
    const { rows } = await tx.query<{ waiting: string }>(sql.change, [shards]);
    const waiting = Number(rows[0]?.waiting ?? 0);
    if (waiting > 0) {
      throw invalidOptions('shards', `schema ${schema} still has ${waiting} outbox rows: drain the outbox first`);
    }
  });
}
