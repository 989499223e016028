import { CODES } from './client.ts';

/**
 * What a failed transactional call asks of us. The client's KafkaJS-style errors drop librdkafka's `isFatal` /
 * `isTxnRequiresAbort` / `isRetriable` flags (its error class reads `fatal`/`abortable`/`retriable`, which the native
 * error does not have: they are always false), so we decide by the error code, as librdkafka's own rules do
 * (rdkafka_txnmgr.c): these codes make the producer unusable; anything else is tried with an abort, and an abort
 * that fails makes the producer unusable too.
 */
export type TxnErrorKind = 'fatal' | 'abortable';

// Read on first use, not at import: `import 'effectively'` must not load the Kafka client (embedded users have none).
let table: { errors: Record<string, number>; fatal: Set<number>; retriableCommit: Set<number> } | undefined;
function codes() {
  if (table) return table;
  const errors = CODES.ERRORS as Record<string, number>;
  table = {
    errors,
    fatal: new Set(fatalNames.map((name) => errors[name]).filter((code) => code !== undefined)),
    // A commit that timed out may be asked again: librdkafka finishes the same commit (or reports its outcome).
    retriableCommit: new Set([errors.ERR__TIMED_OUT, errors.ERR__TIMED_OUT_QUEUE].filter((c) => c !== undefined)),
  };
  return table;
}

const fatalNames = [
  'ERR__FATAL',
  'ERR__FENCED',
  'ERR__STATE',
  'ERR__NOT_CONFIGURED',
  'ERR_PRODUCER_FENCED',
  'ERR_INVALID_PRODUCER_EPOCH',
  'ERR_INVALID_PRODUCER_ID_MAPPING',
  'ERR_INVALID_TXN_STATE',
  'ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'ERR_CLUSTER_AUTHORIZATION_FAILED',
  'ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT',
] as const;

export function errorCode(error: unknown): number {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'number' ? code : (codes().errors.ERR_UNKNOWN ?? -1);
}

export function errorCodeName(code: number): string {
  for (const [name, value] of Object.entries(codes().errors)) if (value === code) return name;
  return `code ${code}`;
}

export function txnErrorKind(error: unknown): TxnErrorKind {
  return codes().fatal.has(errorCode(error)) ? 'fatal' : 'abortable';
}

export function isRetriableCommit(error: unknown): boolean {
  return codes().retriableCommit.has(errorCode(error));
}
