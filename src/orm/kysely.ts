/**
 * `effectively/kysely`: the library inside Kysely's transactions, and Kysely inside the consumer's.
 * - `fromKysely(trx)`: your Kysely transaction as the library's `Queryable`, for `outbox.enqueue` and `effects.schedule`
 *   (the event and the effect commit with your rows, or not at all);
 * - `kyselyIn(ctx.tx)`: a Kysely that writes in the consumer's transaction (your rows commit with the dedup row).
 * Kysely is an optional peer dependency: only this module imports it.
 */
import { CompiledQuery, Kysely, type KyselyPlugin, PostgresDialect, type PostgresPool } from 'kysely';
import type { Queryable } from '../db/port.ts';
import { transactionClient } from '../db/transaction-client.ts';
import { notATransaction } from '../errors.ts';

/** What `fromKysely` needs: a `Transaction` (or a `Kysely`, then each statement is its own transaction). */
export interface KyselyExecutor {
  executeQuery<R>(query: CompiledQuery<R>): Promise<{ rows: R[]; numAffectedRows?: bigint }>;
  /** The same transaction without your plugins (Kysely ≥ 0.27 has it). */
  withoutPlugins?(): KyselyExecutor;
  /** Kysely's own flag: true on a transaction, false on the Kysely it came from. */
  readonly isTransaction?: boolean;
  /** Kysely's executor: its plugins tell a Kysely of `kyselyIn`. */
  getExecutor?(): { readonly plugins: readonly KyselyPlugin[] };
}

/** Marks the Kyselys of `kyselyIn` (kept by `withSchema`, `withPlugin`); changes nothing of a query or its result. */
const inConsumerTransaction: KyselyPlugin = {
  transformQuery: ({ node }) => node,
  transformResult: async ({ result }) => result,
};

/**
 * Your Kysely transaction (`db.transaction().execute(async (trx) => …)`) as the library's `Queryable`. The library's
 * statements skip your plugins: a `CamelCasePlugin` would rename the columns of the rows it reads (`last_error`).
 */
export function fromKysely(trx: KyselyExecutor): Queryable {
  // The Kysely itself (not its transaction) runs each statement on a connection of its pool, committed alone; a Kysely
  // of `kyselyIn` (and what withSchema / withPlugin make of it) writes in the consumer's transaction.
  if (trx.isTransaction === false && !trx.getExecutor?.().plugins.includes(inConsumerTransaction))
    throw notATransaction('fromKysely', 'trx');
  const plain = trx.withoutPlugins?.() ?? trx;
  return {
    async query<R extends Record<string, unknown>>(text: string, params: unknown[] = []) {
      const result = await plain.executeQuery(CompiledQuery.raw(text, params) as CompiledQuery<R>);
      const affected = result.numAffectedRows;
      return { rows: result.rows, rowCount: affected === undefined ? result.rows.length : Number(affected) };
    },
  };
}

export interface KyselyInOptions {
  /** Your Kysely's plugins (`CamelCasePlugin`…), so the handler's queries read as your others do. */
  plugins?: KyselyPlugin[];
}

/**
 * A Kysely whose every statement runs in `tx`, the consumer's transaction (`ctx.tx`, or the `tx` of `ctx.savepoint`).
 * Its `transaction()` is a savepoint of that transaction (no isolation level or access mode). Streams are not
 * supported. Cheap to make: one per handler call is fine.
 */
export function kyselyIn<DB>(tx: Queryable, options: KyselyInOptions = {}): Kysely<DB> {
  const client = transactionClient(tx);
  const pool = { connect: async () => client, end: async () => undefined } as unknown as PostgresPool;
  return new Kysely<DB>({
    dialect: new PostgresDialect({ pool }),
    plugins: [...(options.plugins ?? []), inConsumerTransaction],
  });
}
