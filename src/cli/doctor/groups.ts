import type { Db } from '../../db/port.ts';
import { loadSql } from '../../db/sql.ts';

/** A consumer group the database knows, and how long it keeps dedup rows (undefined: for ever). */
export interface GroupRetention {
  name: string;
  keepMs: number | undefined;
}

/** The groups that declared themselves in `schema` (each consumer does at start), `only` narrows them to some names. */
export async function consumerGroups(
  db: Db,
  schema: string,
  only: readonly string[] | undefined,
): Promise<GroupRetention[]> {
  const { rows } = await db.query<{ name: string; keep_ms: string | null }>(
    loadSql(import.meta.url, 'groups.sql', schema),
  );
  return rows
    .filter((row) => !only?.length || only.includes(row.name))
    .map((row) => ({ name: row.name, keepMs: row.keep_ms === null ? undefined : Number(row.keep_ms) }));
}

/** The topics `group` committed offsets on in the embedded log. */
export async function embeddedTopics(db: Db, schema: string, group: string): Promise<string[]> {
  const { rows } = await db.query<{ topic: string }>(loadSql(import.meta.url, 'embedded-topics.sql', schema), [group]);
  return rows.map((row) => row.topic);
}

/** `a, b` → `['a', 'b']`; undefined for nothing. */
export function list(text: string | undefined): string[] | undefined {
  const items = text
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return items?.length ? items : undefined;
}
