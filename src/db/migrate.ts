import { readdirSync, readFileSync } from 'node:fs';
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import { librarySchema } from './identifiers.ts';
import type { Db } from './port.ts';
import { handlerStatements } from './watchdog.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const migrationsDir = new URL('./migrations/', import.meta.url);

/** The migrations shipped with the library, in order (files named `NNN_name.sql`). */
export function migrations(): Migration[] {
  return readdirSync(migrationsDir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: readFileSync(new URL(file, migrationsDir), 'utf8'),
    }));
}

export interface MigrateOptions {
  /** Schema for every table of the library (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
}

export interface MigrateResult {
  applied: string[];
  version: number;
}

/**
 * Applies pending migrations, each in its own transaction, under a transaction-level advisory lock so concurrent
 * starters wait for one another. Refuses a database migrated by a newer version of the library.
 */
export async function migrate(db: Db, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = librarySchema(options.schema);
  const all = migrations();
  const latest = all.at(-1)?.version ?? 0;
  const applied: string[] = [];
  const lockKey = `effectively:migrate:${schema}`;
  await db.transaction(async (tx) => {
    await handlerStatements(tx).query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
  });
  for (const migration of all) {
    await db.transaction(async (tx) => {
      // A migration's DDL on a grown table, and the lock wait behind another starter's, may run longer than the
      // library's short watchdog (`libraryQueryTimeoutMs`): both go with the pool's (`queryTimeoutMs`).
      const long = handlerStatements(tx);
      await long.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockKey]);
      const { rows } = await tx.query<{ version: number }>(`SELECT max(version) AS version FROM ${schema}.migrations`);
      const current = rows[0]?.version ?? 0;
      if (current > latest) {
        throw new EffectivelyError(
          ErrorCodes.EFF_MIGRATION_NEWER,
          `schema ${schema} is at migration ${current}, newer than this library knows (${latest}): upgrade effectively`,
        );
      }
      if (current >= migration.version) return;
      await long.query(migration.sql.replaceAll(':schema', schema));
      await tx.query(`INSERT INTO ${schema}.migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(`${String(migration.version).padStart(3, '0')}_${migration.name}`);
    });
  }
  return { applied, version: latest };
}
