/**
 * The re-entrance guard of a database of one session (PGlite, or a server pool of one connection): a transaction or a query asked for from inside one of
 * its own transactions would wait for ever for the session that transaction holds (and every other user of the
 * database, relays, consumers, heartbeats, would wait behind it). It is refused at once instead.
 *
 * "Inside" is told by an `AsyncLocalStorage` entered around the transaction's work: it follows the work's own chain of
 * calls (awaits, callbacks, timers it starts) and nothing else, so a relay or a consumer of the same process that
 * merely waits its turn for the session is not refused. The entry is marked closed when the work settles, so a timer
 * the work left behind (it keeps the entry) is not refused once that transaction is over.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { EffectivelyError, ErrorCodes } from '../errors.ts';

export interface SingleSessionGuard {
  /** Throws `EFF_NESTED_TRANSACTION` when called from inside a transaction of this database that is still open. */
  refuseInside(operation: 'transaction' | 'query'): void;
  /** Runs the transaction's `work`, marked as inside it until it settles. */
  within<T>(work: () => Promise<T>): Promise<T>;
}

export function nestedTransaction(operation: 'transaction' | 'query'): EffectivelyError {
  return new EffectivelyError(
    ErrorCodes.EFF_NESTED_TRANSACTION,
    `a ${operation} was asked of a database of one session (PGlite, or a pool of one connection) from inside one of ` +
      'its own transactions: it would wait for the session that transaction holds; use the transaction you are in ' +
      '(`tx`) instead',
    { details: { operation } },
  );
}

export function singleSessionGuard(): SingleSessionGuard {
  const inside = new AsyncLocalStorage<{ open: boolean }>();
  return {
    refuseInside(operation) {
      if (inside.getStore()?.open) throw nestedTransaction(operation);
    },
    async within(work) {
      const entry = { open: true };
      try {
        return await inside.run(entry, work);
      } finally {
        entry.open = false;
      }
    },
  };
}
