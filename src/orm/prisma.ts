/**
 * `effectively/prisma`: the library inside Prisma's interactive transactions, and Prisma inside the consumer's
 * (Prisma 7 with its `pg` driver adapter, `@prisma/adapter-pg`).
 * - `fromPrisma(tx)`: your interactive transaction (`prisma.$transaction(async (tx) => …)`) as the library's
 *   `Queryable`, for `outbox.enqueue` and `effects.schedule`;
 * - `prismaIn((adapter) => new PrismaClient({ adapter }))`: gives, for the consumer's `ctx.tx`, a client of yours
 *   whose every statement runs in the consumer's transaction (your rows commit with the dedup row).
 * Prisma is an optional peer dependency: only this module imports it.
 */
import { createRequire } from 'node:module';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Queryable } from '../db/port.ts';
import { type TransactionClient, transactionClient } from '../db/transaction-client.ts';
import { invalidOptions, notATransaction } from '../errors.ts';

/** What `fromPrisma` needs of an interactive transaction. */
export interface PrismaRaw {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/** A write that returns no rows: only `$executeRawUnsafe` gives its row count (`$queryRawUnsafe` gives `[]`). */
const countOnly = (text: string) =>
  /^\s*(insert|update|delete|merge)\b/i.test(text.replace(/^(\s|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, '')) &&
  !/\breturning\b/i.test(text);

/** The clients `prismaIn` made: every statement of theirs runs in the consumer's transaction. */
const inTransaction = new WeakSet<object>();

/** A client of `prismaIn`, or one `$extends` made of it (Prisma keeps the client it extended: `_appliedParent`). */
function madeByPrismaIn(client: object): boolean {
  const seen = new Set<object>();
  for (let at: unknown = client; typeof at === 'object' && at !== null && !seen.has(at); ) {
    if (inTransaction.has(at)) return true;
    seen.add(at);
    at = (at as { _appliedParent?: unknown })._appliedParent;
  }
  return false;
}

/**
 * Your interactive transaction as the library's `Queryable`: the library's statements run through
 * `$queryRawUnsafe` in it, and a write without `RETURNING` through `$executeRawUnsafe`, so that its `rowCount` is the
 * rows it touched (what `ledgerEntry` and `versionGuard` read to say `'applied'`).
 */
export function fromPrisma(tx: PrismaRaw): Queryable {
  // A client of your own (not its interactive transaction's, which has no `$disconnect`) commits each statement alone;
  // a client of `prismaIn` writes in the consumer's transaction.
  if (typeof (tx as { $disconnect?: unknown }).$disconnect === 'function' && !madeByPrismaIn(tx))
    throw notATransaction('fromPrisma', 'tx');
  return {
    async query<R extends Record<string, unknown>>(text: string, params: unknown[] = []) {
      if (countOnly(text)) return { rows: [] as R[], rowCount: await tx.$executeRawUnsafe(text, ...params) };
      const rows = await tx.$queryRawUnsafe<R[]>(text, ...params);
      return { rows, rowCount: rows.length };
    },
  };
}

/**
 * A `pg.Pool` in shape only: Prisma's `pg` adapter takes a pool, and this one hands out the consumer's transaction
 * (as a client whose BEGIN, COMMIT and ROLLBACK are savepoints) instead of connections of its own.
 */
class TransactionPool extends pg.Pool {
  readonly #client: TransactionClient;

  constructor(client: TransactionClient) {
    super({ max: 1 });
    this.#client = client;
  }

  override query(...args: unknown[]): never {
    return this.#client.query(args[0] as string, args[1] as unknown[]) as never;
  }

  override connect(): never {
    return Promise.resolve(this.#client) as never;
  }
}

let onePg: boolean | undefined;

/**
 * `PrismaPg` tells a pool from a configuration with `instanceof pg.Pool`: under another copy of `pg` it would take
 * this pool for a configuration and connect on its own, outside the consumer's transaction. Refused instead.
 */
function assertOnePg(): void {
  onePg ??= createRequire(import.meta.resolve('@prisma/adapter-pg'))('pg').Pool === pg.Pool;
  if (!onePg) {
    throw invalidOptions('pg', "@prisma/adapter-pg must use the library's `pg` package (one copy of pg installed)");
  }
}

/** The adapter factory `new PrismaClient({ adapter })` takes. */
export type PrismaPgAdapter = PrismaPg;

/** `@prisma/adapter-pg`'s options: give the same `schema` as your own client's adapter. */
export type PrismaPgOptions = NonNullable<ConstructorParameters<typeof PrismaPg>[1]>;

/**
 * For each consumer transaction (`ctx.tx`), a Prisma client of yours whose every statement runs in it, made with
 * `makeClient` once per transaction. Prisma's own transactions in it (a nested write, `$transaction`) are savepoints.
 *
 * ```ts
 * const prismaFor = prismaIn((adapter) => new PrismaClient({ adapter }));
 * createConsumer({ …, handler: async (event, ctx) => { await prismaFor(ctx.tx).order.update(…) } });
 * ```
 */
export function prismaIn<Client>(
  makeClient: (adapter: PrismaPgAdapter) => Client,
  options: PrismaPgOptions = {},
): (tx: Queryable) => Client {
  const clients = new WeakMap<Queryable, Client>();
  return (tx) => {
    let client = clients.get(tx);
    if (client === undefined) {
      assertOnePg();
      client = makeClient(new PrismaPg(new TransactionPool(transactionClient(tx)), options));
      clients.set(tx, client);
      if (typeof client === 'object' && client !== null) inTransaction.add(client);
    }
    return client;
  };
}
