// Two client-side watchdogs on a PostgreSQL connection (node-postgres' `query_timeout`): a short one on the library's
// own statements (BEGIN and COMMIT, the dedup claim, the relay's reads and deletes, offsets, leases), whose answers
// come in milliseconds when the network is up, so that a silent connection (a lost COMMIT answer, a half-open socket)
// is noticed within seconds; and the pool's longer one on a handler's statements, which may legitimately run long.
// node-postgres reads `query_timeout` per query from the query config object before the connection's own.
import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { Queryable } from './port.ts';
import { isConnectionLost } from './sqlstate.ts';

/** Where a transaction's view keeps the handler's view of the same connection (the pool's longer watchdog). */
const handlerView = Symbol('effectively.db.handlerStatements');

/** node-postgres' query config object, or the statement's text. */
type Statement = string | { text: string; query_timeout?: number; [option: string]: unknown };

/** What a node-postgres client or pool takes: `query(textOrConfig, values)`. */
interface ConfigQueryable {
  query(statement: Statement, values?: unknown[]): Promise<unknown>;
}

/** pg's watchdog error: no code, this message (node-postgres' client.js). */
export function isWatchdogTimeout(error: unknown): boolean {
  return error instanceof Error && !(error instanceof EffectivelyError) && error.message === 'Query read timeout';
}

/** Connection failures of the library's own statements (never a record's fault, whatever a fresh connection says). */
const ownFailures = new WeakSet<object>();

/**
 * True when `error` is a lost connection met by one of the library's own statements (BEGIN, the dedup claim, COMMIT...),
 * or its watchdog's `EFF_DB_NO_ANSWER`: the consumer's database connection failed, not the record being applied.
 */
export function lostInLibraryStatement(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if ((error as { code?: unknown }).code === ErrorCodes.EFF_DB_NO_ANSWER) {
    return (error as EffectivelyError).details?.watchdog === 'libraryQueryTimeoutMs';
  }
  return ownFailures.has(error);
}

/**
 * The first word of a statement (`COMMIT`, `INSERT`, `WITH`…): enough to say which one got no answer. Leading comments
 * are skipped (the library's .sql files start with one).
 */
function verbOf(statement: Statement): string {
  const text = typeof statement === 'string' ? statement : statement.text;
  return (
    String(text)
      .replace(/^(\s|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, '')
      .match(/^[A-Za-z]+/)?.[0]
      ?.toUpperCase() ?? '?'
  );
}

/**
 * `EFF_DB_NO_ANSWER` for a statement whose answer did not come within its watchdog: the connection is discarded and
 * the statement's outcome is unknown (a COMMIT may have committed). Other errors are returned as they are.
 */
export function noAnswer(error: unknown, statement: Statement, timeoutMs: number | undefined, who: string): unknown {
  if (!isWatchdogTimeout(error)) return error;
  const verb = verbOf(statement);
  return new EffectivelyError(
    ErrorCodes.EFF_DB_NO_ANSWER,
    `PostgreSQL did not answer ${verb} within ${timeoutMs ?? '?'} ms (${who}): the connection is discarded, the statement's outcome is unknown`,
    { cause: error, retryable: true, details: { statement: verb, timeoutMs, watchdog: who } },
  );
}

/** Sends `statement` with the watchdog `timeoutMs` (0: the connection's own), naming a silent answer. */
function send(target: ConfigQueryable, statement: Statement, values: unknown[] | undefined, timeoutMs: number) {
  const bounded =
    timeoutMs <= 0
      ? statement
      : typeof statement === 'string'
        ? { text: statement, query_timeout: timeoutMs }
        : { ...statement, query_timeout: statement.query_timeout ?? timeoutMs };
  return target.query(bounded, values);
}

/**
 * The library's view of a connection or a pool: every statement bounded by `ownMs` (0: the connection's own watchdog),
 * and, for a transaction (`handlerMs` given), the handler's view of the same connection, bounded by the pool's
 * watchdog (`handlerMs`, for the error's message only: node-postgres applies it).
 */
export function watched(target: ConfigQueryable, ownMs: number, handlerMs?: number): Queryable {
  const view = (ms: number, shown: number | undefined, who: string, library: boolean): Queryable => ({
    query: ((statement: Statement, values?: unknown[]) =>
      send(target, statement, values, ms).catch((error: unknown) => {
        if (library && isConnectionLost(error) && typeof error === 'object' && error !== null) ownFailures.add(error);
        throw noAnswer(error, statement, shown, who);
      })) as Queryable['query'],
  });
  const own = view(ownMs, ownMs || handlerMs, ownMs > 0 ? 'libraryQueryTimeoutMs' : 'queryTimeoutMs', ownMs > 0);
  if (handlerMs !== undefined) {
    Object.defineProperty(own, handlerView, { value: view(0, handlerMs, 'queryTimeoutMs', false) });
  }
  return own;
}

/**
 * The view of a library transaction a handler's own statements go through: the pool's longer watchdog
 * (`queryTimeoutMs`) instead of the library's short one. Any other Queryable is returned as it is.
 */
export function handlerStatements(tx: Queryable): Queryable {
  return (tx as { [handlerView]?: Queryable })[handlerView] ?? tx;
}
