import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { pgDb } from './pg.ts';
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

/**
 * PostgreSQL compiled to WASM, in this process: the embedded default. PGlite is ONE session, so the pool holds a single
 * connection and everything (the caller's transactions, the relay, the consumers) takes turns on it. Never ask for a
 * second connection while holding one: it would wait forever. It never fsyncs: fine for a demo or a single machine that
 * can afford to lose the last moments on power loss, not for money.
 */
export async function pgliteDb(options: PgliteDbOptions = {}): Promise<EmbeddedDb> {
  const pglite = await PGlite.create(options.dataDir === undefined ? {} : { dataDir: options.dataDir });
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  const db = pgDb(pool);
  let closing: Promise<void> | undefined;
  return {
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
