import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { pgDb } from './pg.ts';
import type { Db } from './port.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

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
export async function pgliteDb(options: PgliteDbOptions = {}): Promise<Db & { pglite: PGlite }> {
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
