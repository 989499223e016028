import type { Queryable } from '../db/port.ts';
import { isConnectionLost, sqlState } from '../db/sqlstate.ts';
import { lostInLibraryStatement } from '../db/watchdog.ts';
import { EffectivelyError, ErrorCodes } from '../errors.ts';

/**
 * What else counts as permanent (dead-lettered at once, never retried): error classes (`instanceof`) and codes
 * (`error.code`, e.g. a SQLSTATE such as `23505`, or an application's own code).
 */
export type PermanentErrors = readonly (string | (abstract new (...args: never[]) => unknown))[];

/**
 * True when retrying cannot help: a non-retryable `EffectivelyError` (`PermanentError`, decode failures,
 * `EFF_TX_ABORTED` by a statement that fails the same way again), or an error matching `permanent`. Everything else
 * is retried up to the limit, then dead-lettered.
 */
export function isPermanent(error: unknown, permanent: PermanentErrors = []): boolean {
  // A transaction aborted by a statement the handler swallowed fails the same way each time (a unique violation,
  // say): dead-lettered at once, unless that statement's failure passes on a retry (contention, a lost connection).
  if (error instanceof EffectivelyError && error.code === ErrorCodes.EFF_TX_ABORTED) return !passesOnRetry(error.cause);
  if (error instanceof EffectivelyError) return !error.retryable;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return permanent.some((match) => (typeof match === 'string' ? match === code : error instanceof match));
}

/**
 * Whether a failure is an outage (nobody's fault: wait, count no attempt) rather than the record's: the schema registry
 * unreachable, one of the library's own statements that lost its connection or got no answer (`EFF_DB_NO_ANSWER` by
 * `libraryQueryTimeoutMs`), or
 * a lost connection while the consumer's own database indeed does not answer. A refused connection
 * of the handler's own (a third-party call) with the database up is the record's failure, counted like any other.
 */
export function outageProbe(db: Queryable): (error: unknown) => Promise<boolean> {
  const answers = () =>
    db.query('SELECT 1').then(
      () => true,
      () => false,
    );
  return async (error) => {
    // The library's own statement (BEGIN, the dedup claim, COMMIT...) lost its connection or got no answer within its
    // watchdog: the consumer's database connection failed, whatever a fresh connection answers now (a reset or a
    // silence is healed by then). A handler's statement past the pool's watchdog is the record's failure, counted.
    // The same error thrown by the handler (its own `db.query` outside `ctx.tx`, on the library's watchdog) is an
    // outage only if the database does not answer now: a query of its own that always runs longer is its record's
    // failure, counted, else the record is retried for ever under "database unreachable".
    if (lostInLibraryStatement(error)) return handlerThrown.has(error as object) ? !(await answers()) : true;
    if (error instanceof EffectivelyError) return error.code === ErrorCodes.EFF_SCHEMA_REGISTRY_UNAVAILABLE;
    if (!isConnectionLost(error)) return false;
    return !(await answers());
  };
}

/** Errors a handler threw (outageProbe tells its own statements' failures from the library's). */
const handlerThrown = new WeakSet<object>();

/** Notes that the handler threw `error` (called where a handler's failure is caught). */
export function thrownByHandler(error: unknown): void {
  if (typeof error === 'object' && error !== null) handlerThrown.add(error);
}

const contentionStates = new Set(['40001', '40P01', '55P03']);

/** Whether a statement's failure may pass when done again: contention, a connection lost, a server going away. */
function passesOnRetry(error: unknown): boolean {
  const state = sqlState(error);
  return (
    isConnectionLost(error) || (state !== undefined && (contentionStates.has(state) || /^(08|53|57P0)/.test(state)))
  );
}

/**
 * Whether a failure is contention with other transactions (a serialization failure, a deadlock, a lock not available):
 * it passes by retrying the same work and says nothing about the records, so it counts as no record's attempt.
 */
export function isContention(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && contentionStates.has(state);
}

/**
 * Whether a failure says this member no longer holds the partition (the embedded transport's `EFF_LEASE_LOST`): no
 * record's fault and nothing to retry here; the work on that partition stops and its next holder starts from the
 * committed offset.
 */
export function isLeaseLost(error: unknown): boolean {
  return error instanceof EffectivelyError && error.code === ErrorCodes.EFF_LEASE_LOST;
}
