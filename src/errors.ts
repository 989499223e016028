/** Stable error codes. Each one is documented in docs/errors.md (a test keeps the two in step). */
export const ErrorCodes = {
  EFF_INVALID_OPTIONS: 'EFF_INVALID_OPTIONS',
  EFF_INVALID_IDENTIFIER: 'EFF_INVALID_IDENTIFIER',
  EFF_INVALID_EVENT: 'EFF_INVALID_EVENT',
  EFF_DECODE_FAILED: 'EFF_DECODE_FAILED',
  EFF_FORWARD_HEADERS_INVALID: 'EFF_FORWARD_HEADERS_INVALID',
  EFF_MISSING_EVENT_ID: 'EFF_MISSING_EVENT_ID',
  EFF_HANDLER_FAILED: 'EFF_HANDLER_FAILED',
  EFF_DB_TRANSIENT: 'EFF_DB_TRANSIENT',
  EFF_DB_PERMANENT: 'EFF_DB_PERMANENT',
  EFF_MIGRATION_NEWER: 'EFF_MIGRATION_NEWER',
  EFF_NOT_MIGRATED: 'EFF_NOT_MIGRATED',
  EFF_TX_ABORTED: 'EFF_TX_ABORTED',
  EFF_TRANSPORT: 'EFF_TRANSPORT',
  EFF_BROKER_UNREACHABLE: 'EFF_BROKER_UNREACHABLE',
  EFF_KAFKA_CLIENT_UNAVAILABLE: 'EFF_KAFKA_CLIENT_UNAVAILABLE',
  EFF_LEASE_LOST: 'EFF_LEASE_LOST',
  EFF_CLOSED: 'EFF_CLOSED',
  EFF_TIMEOUT: 'EFF_TIMEOUT',
  EFF_CLOSE_TIMEOUT: 'EFF_CLOSE_TIMEOUT',
  EFF_REDRIVE_BEYOND_RETENTION: 'EFF_REDRIVE_BEYOND_RETENTION',
  EFF_REDRIVE_TRANSPORT_UNKNOWN: 'EFF_REDRIVE_TRANSPORT_UNKNOWN',
  EFF_DATABASE_UNSET: 'EFF_DATABASE_UNSET',
  EFF_DB_UNREACHABLE: 'EFF_DB_UNREACHABLE',
  EFF_DB_NO_ANSWER: 'EFF_DB_NO_ANSWER',
  EFF_SCHEMA_INVALID: 'EFF_SCHEMA_INVALID',
  EFF_PROVIDER_TRANSIENT: 'EFF_PROVIDER_TRANSIENT',
  EFF_PROVIDER_PERMANENT: 'EFF_PROVIDER_PERMANENT',
  EFF_PROVIDER_TIMEOUT: 'EFF_PROVIDER_TIMEOUT',
  EFF_SCHEMA_UNKNOWN_ID: 'EFF_SCHEMA_UNKNOWN_ID',
  EFF_SCHEMA_NOT_FOUND: 'EFF_SCHEMA_NOT_FOUND',
  EFF_SCHEMA_INCOMPATIBLE: 'EFF_SCHEMA_INCOMPATIBLE',
  EFF_SCHEMA_DECODE_FAILED: 'EFF_SCHEMA_DECODE_FAILED',
  EFF_SCHEMA_ENCODE_FAILED: 'EFF_SCHEMA_ENCODE_FAILED',
  EFF_SCHEMA_REGISTRY_UNAVAILABLE: 'EFF_SCHEMA_REGISTRY_UNAVAILABLE',
  EFF_NESTED_TRANSACTION: 'EFF_NESTED_TRANSACTION',
  EFF_POOL_TOO_SMALL: 'EFF_POOL_TOO_SMALL',
  EFF_WAL_UNAVAILABLE: 'EFF_WAL_UNAVAILABLE',
  EFF_WAL_SLOT_INVALIDATED: 'EFF_WAL_SLOT_INVALIDATED',
  EFF_KEY_OVERTAKEN: 'EFF_KEY_OVERTAKEN',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export interface EffectivelyErrorOptions {
  retryable?: boolean;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class EffectivelyError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: EffectivelyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EffectivelyError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }
}

/** Thrown by handlers for a failure that retrying cannot fix (the record becomes a dead letter once that issue lands). */
export class PermanentError extends EffectivelyError {
  constructor(message: string, options: Omit<EffectivelyErrorOptions, 'retryable'> = {}) {
    super(ErrorCodes.EFF_HANDLER_FAILED, message, { ...options, retryable: false });
    this.name = 'PermanentError';
  }
}

/** Thrown by handlers for a failure that may pass on a later attempt. */
export class TransientError extends EffectivelyError {
  constructor(message: string, options: Omit<EffectivelyErrorOptions, 'retryable'> = {}) {
    super(ErrorCodes.EFF_HANDLER_FAILED, message, { ...options, retryable: true });
    this.name = 'TransientError';
  }
}

export function invalidOptions(field: string, problem: string): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_INVALID_OPTIONS, `invalid option \`${field}\`: ${problem}`, {
    details: { field },
  });
}

/**
 * A transaction whose COMMIT did not commit: a statement failed inside it and the failure was caught without a
 * savepoint, so PostgreSQL answered COMMIT with ROLLBACK. Retryable: the work is redone from the start.
 */
/**
 * An ORM adapter's `fromX(tx)` given the database (or client) instead of one of its transactions: the library's
 * statements (an outbox row, a scheduled effect) would each commit alone on a connection of the pool, outside the
 * caller's transaction, so the business rows and the event could be saved one without the other.
 */
export function notATransaction(adapter: string, field: string): EffectivelyError {
  return invalidOptions(
    field,
    `${adapter} needs a transaction of yours (the one your business rows are written in), not the database itself: ` +
      "there each statement would commit alone on a connection of its own, and your rows and the library's (an " +
      'outbox row, a scheduled effect) could be saved one without the other',
  );
}

/** The work inside a library transaction ended it before the library's COMMIT (checked on node-postgres' status). */
export function transactionEndedEarly(): EffectivelyError {
  return new EffectivelyError(
    ErrorCodes.EFF_NESTED_TRANSACTION,
    "the transaction was ended before the library's COMMIT by a statement sent in it (a COMMIT, END or ROLLBACK, " +
      'e.g. among several statements of one query): what ran after that statement was not in the transaction. Send ' +
      'transaction statements as queries of their own (on `ctx.tx` they become savepoints), or use `ctx.savepoint`',
    { details: { operation: 'transaction' } },
  );
}

export function transactionAborted(where: string, cause?: unknown): EffectivelyError {
  return new EffectivelyError(
    ErrorCodes.EFF_TX_ABORTED,
    `${where}: the transaction was aborted by a failed statement that was caught and not rethrown, so nothing of it ` +
      'was committed; to catch a SQL error and go on, run the statement in a savepoint (`ctx.savepoint(fn)` in a ' +
      'handler, or SAVEPOINT / ROLLBACK TO SAVEPOINT), or let the error propagate',
    { retryable: true, ...(cause === undefined ? {} : { cause }) },
  );
}
