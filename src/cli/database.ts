import { defaultDatabaseUrl } from '../db/pg.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';

/** The database a CLI command acts on: its URL, where it is in words (never the password), and whether it was said. */
export interface CliDatabase {
  url: string;
  /** `host:port/name`, from the URL (a socket directory as the host when the URL names one). */
  label: string;
  /** True when DATABASE_URL is unset and the command would use the built-in default. */
  implicit: boolean;
}

/** Where `url` points, as `host:port/name`: never the user or the password. */
export function databaseLabel(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
    const name = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || 'postgres';
    return `${host}:${parsed.port || '5432'}/${name}`;
  } catch {
    return 'an unparsable DATABASE_URL';
  }
}

export function cliDatabase(env: NodeJS.ProcessEnv = process.env): CliDatabase {
  const implicit = !env.DATABASE_URL;
  const url = implicit ? defaultDatabaseUrl() : (env.DATABASE_URL as string);
  return { url, label: databaseLabel(url), implicit };
}

/** The line every command that opens the database prints first (on stderr: stdout stays the command's output). */
export function databaseLine(database: CliDatabase, schema: string): string {
  const how = database.implicit ? ' (DATABASE_URL is unset: the default)' : '';
  return `effectively: database ${database.label}${how}, schema ${schema}`;
}

/**
 * A command that changes the database refuses the built-in default (`postgres` on 127.0.0.1): on a shared server
 * that is someone else's database. Reading commands run on it and say so.
 */
export function refuseImplicit(database: CliDatabase, command: string): void {
  if (!database.implicit) return;
  throw new EffectivelyError(
    ErrorCodes.EFF_DATABASE_UNSET,
    `\`${command}\` changes the database and DATABASE_URL is unset (the default would be ${database.label}): ` +
      'set it, e.g. DATABASE_URL=postgres://user@host:5432/name, even to that default',
  );
}

/** Whether `command action` (with its options) changes anything: a dry run or a listing does not. */
export function changesDatabase(command: string, action: string | undefined, dryRun: boolean): boolean {
  if (command === 'migrate' || command === 'relay' || command === 'sender') return true;
  if (dryRun) return false;
  if (command === 'console') return true; // its operators redrive and discard (unless --read-only, said as dryRun)
  const changing: Record<string, string[]> = {
    dlq: ['redrive', 'discard'],
    effects: ['revive', 'cancel', 'purge'],
    outbox: ['retry', 'discard'],
  };
  return changing[command]?.includes(action ?? '') ?? false;
}
