import { migrations } from '../../db/migrate.ts';
import type { Db } from '../../db/port.ts';
import { type Finding, finding } from './finding.ts';

/** An error's message on one line. */
export function oneLine(error: unknown): string {
  return String((error as Error).message ?? error)
    .replace(/\s+/g, ' ')
    .trim();
}

/** PostgreSQL answers a query. */
export async function checkPostgres(db: Db): Promise<Finding> {
  try {
    const { rows } = await db.query<{ version: string }>("SELECT current_setting('server_version') AS version");
    return finding('ok', 'postgres', `reachable (PostgreSQL ${rows[0]?.version ?? '?'})`);
  } catch (error) {
    return finding(
      'fail',
      'postgres',
      `not reachable: ${oneLine(error)}`,
      'check DATABASE_URL and that the server is up',
    );
  }
}

/** Every migration this version of the library ships is applied to `schema`, and none newer. */
export async function checkMigrations(db: Db, schema: string): Promise<Finding> {
  const latest = migrations().at(-1)?.version ?? 0;
  const migrate = `run \`npx effectively migrate --schema ${schema}\` (or \`migrate(db, { schema: '${schema}' })\` at start-up)`;
  const { rows: table } = await db.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
    `${schema}.migrations`,
  ]);
  if (!table[0]?.found) return finding('fail', 'migrations', `schema ${schema} was never migrated`, migrate);
  const { rows } = await db.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.migrations`,
  );
  const current = Number(rows[0]?.version ?? 0);
  if (current < latest)
    return finding(
      'fail',
      'migrations',
      `schema ${schema} is at migration ${current}, this library at ${latest}`,
      migrate,
    );
  if (current > latest)
    return finding(
      'fail',
      'migrations',
      `schema ${schema} is at migration ${current}, newer than this library (${latest})`,
      'upgrade effectively everywhere it runs against this schema',
    );
  return finding('ok', 'migrations', `schema ${schema} is at migration ${current}, current`);
}
