/**
 * PostgreSQL errors are classified by SQLSTATE (never by message text): the classes below may pass on retry.
 * 08 connection exception, 40001 serialization failure, 40P01 deadlock, 53 insufficient resources,
 * 57P01..57P03 shutdown / cannot connect now, 55P03 lock not available.
 */
const transientStates = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03']);
const transientClasses = new Set(['08', '53']);
const transientNodeCodes = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  // a coded error the library made of a database error (EFF_NOT_MIGRATED) keeps the SQLSTATE in its details
  const kept = (error as { details?: { sqlState?: unknown } }).details?.sqlState;
  return typeof kept === 'string' && /^[0-9A-Z]{5}$/.test(kept) ? kept : undefined;
}

/** True when a database error is worth retrying: a transient SQLSTATE or a broken connection. */
export function isTransientDbError(error: unknown): boolean {
  if ((error as { code?: unknown })?.code === 'EFF_DB_NO_ANSWER') return true;
  const state = sqlState(error);
  if (state !== undefined) return transientStates.has(state) || transientClasses.has(state.slice(0, 2));
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && transientNodeCodes.has(code);
}

const connectionStates = new Set(['57P01', '57P02', '57P03']);

/**
 * True when the database itself went away (connection exception, shutdown, refused or reset connection), as opposed to
 * a failure of one statement: the record being applied is not at fault. A statement the watchdog gave up on
 * (`EFF_DB_NO_ANSWER`) counts: its connection went silent. node-postgres reports a connection the server
 * dropped without a code, only by message, so its two messages are recognised too.
 */
export function isConnectionLost(error: unknown): boolean {
  // a statement with no answer within its watchdog (watchdog.ts): the connection went silent and was discarded
  if ((error as { code?: unknown })?.code === 'EFF_DB_NO_ANSWER') return true;
  const state = sqlState(error);
  if (state !== undefined) return connectionStates.has(state) || state.startsWith('08');
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return transientNodeCodes.has(code);
  const message = (error as { message?: unknown }).message;
  // node-postgres after the server went away: "Connection terminated unexpectedly", and on a client it already marked
  // broken: "Client has encountered a connection error and is not queryable" (neither has a code)
  return typeof message === 'string' && /^Connection terminated|is not queryable$/.test(message);
}
