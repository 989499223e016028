/**
 * `effectively/drizzle`: the library inside Drizzle's transactions (node-postgres driver), and Drizzle inside the
 * consumer's.
 * - `fromDrizzle(tx)`: your Drizzle transaction as the library's `Queryable`, for `outbox.enqueue` and
 *   `effects.schedule` (the event and the effect commit with your rows, or not at all);
 * - `drizzleIn(ctx.tx, { schema })`: a Drizzle database that writes in the consumer's transaction (your rows commit
 *   with the dedup row).
 * Drizzle is an optional peer dependency: only this module imports it.
 */
import type { DrizzleConfig } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { Queryable } from '../db/port.ts';
import { isTransactionClient, transactionClient } from '../db/transaction-client.ts';
import { invalidOptions, notATransaction } from '../errors.ts';

/** A Drizzle transaction or database of the node-postgres driver (`drizzle-orm/node-postgres`). */
export interface DrizzleNodePg {
  readonly _: { readonly session: unknown };
}

/**
 * Your Drizzle transaction (`db.transaction(async (tx) => …)`) as the library's `Queryable`: the library's statements
 * run on the transaction's own node-postgres connection, as Drizzle's do.
 */
export function fromDrizzle(tx: DrizzleNodePg): Queryable {
  // Drizzle's node-postgres session keeps the connection it runs its statements on (the transaction's, here).
  const client = (tx._.session as { client?: Queryable } | undefined)?.client;
  // The database itself (not its transaction) runs each statement on a connection of its pool, committed alone; one of
  // `drizzleIn` runs them on the consumer's transaction, and one over a node-postgres client you sent BEGIN on (its
  // transaction status 'T') on yours.
  const status = (client as { getTransactionStatus?: () => string | null } | undefined)?.getTransactionStatus?.();
  if (typeof (tx as { rollback?: unknown }).rollback !== 'function' && !isTransactionClient(client) && status !== 'T')
    throw notATransaction('fromDrizzle', 'tx');
  if (typeof client?.query !== 'function') {
    throw invalidOptions('tx', 'a transaction of Drizzle with the node-postgres driver (drizzle-orm/node-postgres)');
  }
  return { query: (text, params) => client.query(text, params) };
}

/**
 * A Drizzle database whose every statement runs in `tx`, the consumer's transaction (`ctx.tx`, or the `tx` of
 * `ctx.savepoint`). Its `transaction()` is a savepoint of that transaction (no isolation level or access mode).
 * Cheap to make: one per handler call is fine.
 */
export function drizzleIn<TSchema extends Record<string, unknown> = Record<string, never>>(
  tx: Queryable,
  config: DrizzleConfig<TSchema> = {},
): NodePgDatabase<TSchema> {
  return drizzle({ ...config, client: transactionClient(tx) as never });
}
