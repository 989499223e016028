import type { Queryable } from '../db/port.ts';
import { sqlState } from '../db/sqlstate.ts';
import { transactionAborted } from '../errors.ts';

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
  #savepoints = 0;
  readonly tx: Queryable;

  constructor(private readonly raw: Queryable) {
    const noteFailure = (error: unknown): never => {
      if (!this.#failed) this.#swallowed = error;
      this.#failed = true;
      throw error;
    };
    this.tx = {
      query: <R extends Record<string, unknown>>(text: string, params?: unknown[]) =>
        raw.query<R>(text, params).catch(noteFailure),
    };
  }

  /**
   * Runs `fn` in a savepoint: when it throws, only its own statements are rolled back and the error is rethrown, so the
   * caller may catch it and the transaction goes on. When `fn` swallowed a failed statement itself, the savepoint
   * cannot be released: its statements are rolled back and the call fails with `EFF_TX_ABORTED`.
   */
  savepoint = async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const name = `effectively_sp_${++this.#savepoints}`;
    await this.raw.query(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await fn(this.raw);
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
  };

  /**
   * Throws `EFF_TX_ABORTED` when a statement failed since the last check and the transaction is aborted (a savepoint
   * rolled back to, by `savepoint` or by the handler's own SQL, leaves it alive).
   */
  async check(where: string): Promise<void> {
    if (!this.#failed) return;
    this.#failed = false;
    try {
      await this.raw.query('SELECT 1');
    } catch (error) {
      // the cause is the statement the handler swallowed: it says whether doing it again can pass (classify.ts)
      if (sqlState(error) === '25P02') throw transactionAborted(where, this.#swallowed ?? error);
      throw error;
    }
  }
}
