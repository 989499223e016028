import { errorCode, errorCodeName } from '../transport/kafka/txn-errors.ts';

/**
 * Refusals that belong to the records of a send, not to the moment: they come again on every retry of the same
 * records, so a batch holding one of them would be aborted and redone for ever. (A missing or unauthorized topic is a
 * topic's, not a record's: it is retried with the outage backoff until someone fixes the topic.)
 */
const recordRefusals = new Set([
  'ERR_MSG_SIZE_TOO_LARGE',
  'ERR_RECORD_LIST_TOO_LARGE',
  'ERR_INVALID_MSG',
  'ERR_INVALID_RECORD',
  'ERR_INVALID_TIMESTAMP',
  'ERR_POLICY_VIOLATION',
]);

/** The code's name when `error` is a refusal of a record, else undefined. */
export function recordRefusal(error: unknown): string | undefined {
  const name = errorCodeName(errorCode(error));
  return recordRefusals.has(name) ? name : undefined;
}

/**
 * Of the failed delivery reports of one send, the one that says why: a record's refusal first. Once a transaction
 * failed, librdkafka purges the messages still queued, and their reports (`ERR__PURGE_QUEUE`) often come first.
 */
export function causeOf(errors: readonly unknown[]): unknown {
  return (
    errors.find((error) => recordRefusal(error) !== undefined) ??
    errors.find((error) => errorCodeName(errorCode(error)) !== 'ERR__PURGE_QUEUE') ??
    errors[0]
  );
}
