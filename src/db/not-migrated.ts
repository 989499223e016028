/**
 * A library statement on a schema that was never migrated fails with SQLSTATE 42P01 (`relation "effectively.outbox"
 * does not exist`): a raw driver error that does not say what to do. This turns exactly that case — a missing table of
 * the library, always schema-qualified in its statements — into `EFF_NOT_MIGRATED` naming the command to run. Any
 * other error (a handler's own missing table included) passes through untouched.
 */
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import { migrations } from './migrate.ts';

let tables: Set<string> | undefined;

/** The tables the migrations create (read from them once, so a new migration's tables count at once). */
function libraryTables(): Set<string> {
  tables ??= new Set(
    migrations().flatMap((migration) =>
      [...migration.sql.matchAll(/CREATE TABLE(?: IF NOT EXISTS)? :schema\.([a-z_][a-z0-9_]*)/gi)].map(
        (match) => match[1]!,
      ),
    ),
  );
  return tables;
}

/** The coded error for `error` when it is a library table missing from its schema; undefined otherwise. */
export function notMigrated(error: unknown): EffectivelyError | undefined {
  if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code !== '42P01') return undefined;
  const message = (error as { message?: unknown }).message;
  const match = typeof message === 'string' ? /relation "([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)"/.exec(message) : null;
  if (!match || !libraryTables().has(match[2]!)) return undefined;
  const [, schema, table] = match as unknown as [string, string, string];
  return new EffectivelyError(
    ErrorCodes.EFF_NOT_MIGRATED,
    `the library's tables are not in schema "${schema}" (${table} is missing): run \`npx effectively migrate --schema ${schema}\` ` +
      `(DATABASE_URL set) or call \`await migrate(db, { schema: '${schema}' })\` at start-up`,
    { retryable: true, cause: error, details: { schema, table, sqlState: '42P01' } },
  );
}

/** Rethrows `error`, as `EFF_NOT_MIGRATED` when it is a library table missing (for `.catch(rethrowNotMigrated)`). */
export function rethrowNotMigrated(error: unknown): never {
  throw notMigrated(error) ?? error;
}
