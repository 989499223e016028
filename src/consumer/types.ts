import type { Queryable } from '../db/port.ts';
import type { Event } from '../envelope/event.ts';

/**
 * What became of one event: its effect was applied, it had been applied before, a newer version already was, or (with
 * `keyOrdered`) it waits behind an earlier event of its key that is in retry or dead.
 */
export type Outcome = 'applied' | 'duplicate' | 'stale' | 'parked';

export interface HandlerContext {
  /**
   * The consumer's transaction: the dedup row and everything written here commit together, or not at all. A `BEGIN` /
   * `COMMIT` / `ROLLBACK` sent on it (a helper of yours that opens its own transaction) is a savepoint, its release and
   * its rollback; a COMMIT or ROLLBACK with no BEGIN of yours is refused (`EFF_NESTED_TRANSACTION`).
   */
  tx: Queryable;
  /** Aborted when the consumer closes or loses the partition. */
  signal: AbortSignal;
  group: string;
  /**
   * Runs `fn` in a savepoint of `tx`: when it throws, only its statements are undone and the error is rethrown, so the
   * handler may catch it (an "already done" unique violation) and go on. Catching a SQL error WITHOUT a savepoint
   * aborts the whole transaction: the record then fails with `EFF_TX_ABORTED` instead of counting as applied. Calls
   * made at once (`Promise.all`) take turns (savepoints are a stack on one connection); a call inside `fn` nests.
   */
  savepoint<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  record: { topic: string; partition: number; offset: string };
}

/**
 * Applies one fresh event inside the consumer's transaction. Return `'stale'` when a version guard refused it (the
 * event still counts as processed); anything else means applied (nothing, `'applied'`, or a query's result, as in
 * `(event, { tx }) => tx.query(…)`). Throw to fail: the transaction rolls back.
 * `T` is the type of `event.data` as the handler expects it (`createConsumer<OrderConfirmed>`): a declaration, not a
 * check — the data is what the producer sent, so validate it (a serde with a schema, or your own guard) when the
 * producer is not trusted.
 */
export type EventHandler<T = unknown> = (event: Event<T>, context: HandlerContext) => Promise<unknown>;

export interface BatchHandlerContext {
  /**
   * The consumer's transaction: the dedup rows and everything written here commit together, or not at all. Its own
   * `BEGIN` / `COMMIT` / `ROLLBACK` are a savepoint, as in `HandlerContext.tx`.
   */
  tx: Queryable;
  signal: AbortSignal;
  group: string;
  /**
   * Runs `fn` in a savepoint of `tx`: when it throws, only its statements are undone and the error is rethrown, so the
   * handler may catch it (an "already done" unique violation) and go on. Catching a SQL error WITHOUT a savepoint
   * aborts the whole transaction: the record then fails with `EFF_TX_ABORTED` instead of counting as applied.
   */
  savepoint<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
}

/**
 * Applies a batch's fresh events (in order, duplicates already removed) in one go, e.g. one multi-row INSERT: the fast
 * path. It may return one outcome per event (`'stale'` where a version guard refused it). When it throws, the consumer
 * bisects the batch to find the failing event and applies the others.
 */
export type BatchEventHandler<T = unknown> = (
  events: Event<T>[],
  context: BatchHandlerContext,
) => Promise<void | ('applied' | 'stale')[]>;
