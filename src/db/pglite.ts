import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { poolDb } from './pg.ts';
import type { Db } from './port.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What `pgliteDb()` returns: a `Db`, and the PGlite instance under it. */
export interface EmbeddedDb extends Db {
  /**
   * The `PGlite` instance (`@electric-sql/pglite`), for its own API (`dumpDataDir`, `exec`, extensions): cast it,
   * `db.pglite as PGlite`. Typed `unknown` so that PGlite's declaration files stay out of your type check (with
   * `skipLibCheck: false` they need DOM and Emscripten types), even when you never use the embedded mode.
   */
  readonly pglite: unknown;
}

export interface PgliteDbOptions {
  /** A data folder (kept across runs; one process at a time), or in memory when absent. */
  dataDir?: string;
}

/** Tests only: let a nested transaction wait (for ever) as it did before the guard, to show what the guard prevents. */
export const unguardedForTests = Symbol('effectively.pglite.unguarded');

/**
 * PostgreSQL compiled to WASM, in this process: the embedded default. PGlite is ONE session, so the pool holds a single
 * connection and everything (the caller's transactions, the relay, the consumers) takes turns on it. Never ask for a
 * second connection while holding one: a transaction or query asked of this Db from inside one of its own transactions
 * (`db.query` where `tx.query` was meant, a schema registry on the same Db) is refused at once with
 * `EFF_NESTED_TRANSACTION` instead of waiting for ever (see `single-session.ts`). It never fsyncs: fine for a demo
 * or a single machine that can afford to lose the last moments on power loss, not for money.
 */
export async function pgliteDb(options: PgliteDbOptions & { [unguardedForTests]?: boolean } = {}): Promise<EmbeddedDb> {
  const pglite = await PGlite.create(options.dataDir === undefined ? {} : { dataDir: options.dataDir });
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  // One connection: poolDb refuses re-entrance (the guard of single-session.ts).
  const db = poolDb(pool, { ownsPool: false, guarded: options[unguardedForTests] !== true });
  let closing: Promise<void> | undefined;
  return {
    connections: 1,
    // PGlite answers in-process without real I/O: a loop of queries would run on microtasks alone and starve this
    // process's timers (a relay's poll, a heartbeat) for as long as it lasts. Each call first lets the event loop turn.
    async query(text, params) {
      await turn();
      return db.query(text, params);
    },
    async transaction(work) {
      await turn();
      return db.transaction(work);
    },
    pglite,
    close() {
      closing ??= (async () => {
        await pool.end();
        await pglite.close();
      })();
      return closing;
    },
  };
}
