import { readFileSync } from 'node:fs';
import type { Queryable } from 'effectively';

/** Reads a `.sql` file next to `moduleUrl`, its `:schema` placeholders filled with the (checked) schema name. */
export function sqlFile(moduleUrl: string, file: string, schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/i.test(schema)) throw new Error(`not a schema name: ${JSON.stringify(schema)}`);
  return readFileSync(new URL(file, moduleUrl), 'utf8').replaceAll(':schema', schema);
}

/** Creates a service's tables from its `schema.sql` (every statement `IF NOT EXISTS`). */
export async function createTables(db: Queryable, moduleUrl: string, schema: string): Promise<void> {
  await db.query(sqlFile(moduleUrl, 'schema.sql', schema));
}
