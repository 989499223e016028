import { AsyncLocalStorage } from 'node:async_hooks';
import type { Queryable } from '../db/port.ts';
import { sqlState } from '../db/sqlstate.ts';
import { abandonedTransactions, transactionClient } from '../db/transaction-client.ts';
import { handlerStatements } from '../db/watchdog.ts';
import { EffectivelyError, ErrorCodes, transactionAborted } from '../errors.ts';

/** The last of the savepoints waiting their turn at one level. */
interface Turns {
  last: Promise<void>;
}

/** The savepoint the current chain of calls runs in, if any: a `savepoint` call from there nests in it. */
const levels = new AsyncLocalStorage<{ owner: GuardedTx; inside: Turns }>();

/**
 * The handler's view of the consumer's transaction. PostgreSQL aborts a transaction at its first failed statement, and
 * a handler that catches that error (the common "already done" `try { INSERT } catch {}`) leaves it aborted: every
 * later statement fails, and COMMIT answers ROLLBACK instead of an error. This view notes that a statement failed, so
 * the consumer can check (one `SELECT 1`, only then) that the transaction is still alive after the handler returned,
 * and name the record whose handler broke it. `savepoint(fn)` is the safe way to catch a SQL error and go on.
 */
export class GuardedTx {
  #failed = false;
  /** The first statement error since the last check: what the handler swallowed, the abort's cause. */
  #swallowed: unknown;
  /** Statements failed since the last check or the last rollback to a savepoint (after which the work goes on). */
  #failures = 0;
  #savepoints = 0;
  readonly tx: Queryable;
  /** The transaction as the handler's statements use it: the pool's longer watchdog, not the library's short one. */
  private readonly raw: Queryable;

  constructor(libraryTx: Queryable) {
    const raw = handlerStatements(libraryTx);
    this.raw = raw;
    const noteFailure = (error: unknown): never => {
      if (this.#failures === 0) this.#swallowed = error;
      this.#failed = true;
      this.#failures += 1;
      throw error;
    };
    // `text` may be node-postgres' query config object (an ORM's, through transaction-client.ts)
    const rolledBackTo = (text: unknown) =>
      /^\s*rollback\s+(work\s+|transaction\s+)?to\b/i.test(
        typeof text === 'string' ? text : String((text as { text?: unknown })?.text),
      );
    const noted: Queryable = {
      query: <R extends Record<string, unknown>>(text: string, params?: unknown[]) =>
        raw.query<R>(text, params).then((result) => {
          if (this.#failures > 0 && rolledBackTo(text)) this.#failures = 0; // the failed work was undone
          return result;
        }, noteFailure),
    };
    this.tx = nestable(noted, 'effectively_tx');
  }

  /**
   * The error a handler threw, or `EFF_TX_ABORTED` when it is only the consequence of an earlier failed statement the
   * handler swallowed and went on after (its next statement failed with "current transaction is aborted", 25P02):
   * then the swallowed one is the cause, as when the handler returns.
   */
  explain(error: unknown, where: string): unknown {
    const first = this.#swallowed;
    if (this.#failures < 2 || causedBy(error, first)) return error;
    return transactionAborted(where, first);
  }

  /** Where sibling savepoints take turns: the transaction's top level, or inside a running savepoint. */
  readonly #top: Turns = { last: Promise.resolve() };

  /**
   * Runs `fn` in a savepoint: when it throws, only its own statements are rolled back and the error is rethrown, so the
   * caller may catch it and the transaction goes on. When `fn` swallowed a failed statement itself, the savepoint
   * cannot be released: its statements are rolled back and the call fails with `EFF_TX_ABORTED`.
   * Calls made at once (`Promise.all`) take turns: savepoints are a stack on the one connection, and interleaved, the
   * release of one would take in the other's work, which the other's rollback would then undo. A call from inside
   * `fn` nests, and runs at once.
   */
  savepoint = async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const running = levels.getStore();
    const turns = running?.owner === this ? running.inside : this.#top;
    const before = turns.last;
    let done = () => {};
    turns.last = new Promise<void>((resolve) => {
      done = resolve;
    });
    await before;
    try {
      return await levels.run({ owner: this, inside: { last: Promise.resolve() } }, () => this.#savepoint(fn));
    } finally {
      done();
    }
  };

  async #savepoint<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const name = `effectively_sp_${++this.#savepoints}`;
    await this.raw.query(`SAVEPOINT ${name}`);
    let result: T;
    try {
      // a view of its own: its BEGINs are its own, not those of the handler's other savepoints or records
      result = await fn(nestable({ query: this.raw.query.bind(this.raw) }, `${name}_tx`));
    } catch (error) {
      await this.raw.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw error;
    }
    try {
      await this.raw.query(`RELEASE SAVEPOINT ${name}`);
    } catch (error) {
      if (sqlState(error) !== '25P02') throw error;
      await this.raw.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw transactionAborted('savepoint', error);
    }
    return result;
  }

  /**
   * Throws `EFF_TX_ABORTED` when a statement failed since the last check and the transaction is aborted (a savepoint
   * rolled back to, by `savepoint` or by the handler's own SQL, leaves it alive).
   */
  async check(where: string): Promise<void> {
    // the next record's BEGIN would be refused as a second one at once: the record that left it open fails instead
    if (abandonedTransactions(this.tx) > 0) {
      throw new EffectivelyError(
        ErrorCodes.EFF_NESTED_TRANSACTION,
        'the handler returned with a BEGIN of its own still open (no COMMIT or ROLLBACK, or an ORM transaction not awaited)',
        { details: { operation: 'transaction' } },
      );
    }
    if (!this.#failed) return;
    this.#failed = false;
    this.#failures = 0;
    try {
      await this.raw.query('SELECT 1');
    } catch (error) {
      // the cause is the statement the handler swallowed: it says whether doing it again can pass (classify.ts)
      if (sqlState(error) === '25P02') throw transactionAborted(where, this.#swallowed ?? error);
      throw error;
    }
  }
}

/**
 * `tx` as a handler may use it: its own BEGIN, COMMIT and ROLLBACK (a `withTransaction(client, fn)` helper of the
 * codebase, given `ctx.tx`) become a savepoint, its release and its rollback, instead of committing or rolling back the
 * consumer's transaction halfway through the batch (the dedup rows with it). A COMMIT or ROLLBACK with no BEGIN of the
 * handler's own is refused with `EFF_NESTED_TRANSACTION`.
 */
function nestable(tx: Queryable, savepointPrefix: string): Queryable {
  return transactionClient(tx, savepointPrefix) as unknown as Queryable;
}

/** Whether `error` is `cause`, or wraps it (an ORM's error around the driver's). */
function causedBy(error: unknown, cause: unknown): boolean {
  for (let at = error, depth = 0; at !== undefined && at !== null && depth < 8; depth++) {
    if (at === cause) return true;
    at = (at as { cause?: unknown }).cause;
  }
  return false;
}
