import pg from 'pg';
import { transactionAborted } from '../errors.ts';
import { notMigrated, rethrowNotMigrated } from './not-migrated.ts';
import type { Db, Queryable } from './port.ts';

export interface PgDbOptions {
  /** Default `DATABASE_URL` or `postgres://postgres@127.0.0.1:5432/postgres`. */
  connectionString?: string;
  /** Pool size for the library's own work (default 4). */
  max?: number;
  /**
   * The server ends a session left idle inside a transaction this long (`idle_in_transaction_session_timeout`, default
   * 600,000 ms; 0: never). A client gone silent mid-transaction (a dead network path) would otherwise keep its locks,
   * the relay's shard locks among them, until the kernel gives up on the connection (about 2 h on Linux). Keep it
   * above the longest send a relay pass makes inside its transaction (Kafka's `message.timeout.ms`, 300 s by default).
   */
  idleInTransactionMs?: number;
  /**
   * A query not answered within this many ms fails on the client (`query_timeout`, default 600,000 ms; 0: never) and
   * its connection is dropped: a pass, a claim or a redrive waiting on a silent connection ends instead of waiting for
   * ever. TCP keepalive is on (first probe after 10 s) so a dead path is found even between queries.
   */
  queryTimeoutMs?: number;
}

const defaultSilenceMs = 600_000;

/** The pool settings that bound a silent connection (see `PgDbOptions`). */
function silenceLimits(source: PgDbOptions): pg.PoolConfig {
  const idle = source.idleInTransactionMs ?? defaultSilenceMs;
  const query = source.queryTimeoutMs ?? defaultSilenceMs;
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(idle > 0 ? { idle_in_transaction_session_timeout: idle } : {}),
    ...(query > 0 ? { query_timeout: query } : {}),
  };
}

export function defaultDatabaseUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** A Db on a PostgreSQL server through `pg` (node-postgres). Pass your own pool, or let it make one. */
export function pgDb(source: pg.Pool | PgDbOptions = {}): Db {
  const ownsPool = !(source instanceof pg.Pool);
  const pool =
    source instanceof pg.Pool
      ? source
      : new pg.Pool({
          connectionString: source.connectionString ?? defaultDatabaseUrl(),
          max: source.max ?? 4,
          ...silenceLimits(source),
        });
  // An idle client that loses its server emits 'error' on the pool; without a listener that would crash the process.
  pool.on('error', () => undefined);
  let closing: Promise<void> | undefined;
  return {
    connections: pool.options.max,
    // a library table missing (never migrated) becomes EFF_NOT_MIGRATED, naming the command to run
    query: (text, params) => pool.query(text, params).catch(rethrowNotMigrated) as never,
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: unknown;
      // A checked-out client whose server goes away emits 'error' (the pool only listens on idle ones): without this
      // listener that would crash the process. The failing query rejects as well, which is what the caller handles.
      const onError = (error: unknown) => {
        broken = error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await work(client as Queryable);
        // A transaction a failed statement aborted answers COMMIT with a ROLLBACK tag, not an error: check the tag.
        const committed = await client.query('COMMIT');
        if (committed.command !== 'COMMIT') throw transactionAborted(`COMMIT answered ${committed.command}`);
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError;
        });
        throw notMigrated(error) ?? error;
      } finally {
        client.off('error', onError);
        client.release(broken as Error | undefined);
      }
    },
    async listen(channel, onNotify) {
      // the pool's own settings (host, user, password, TLS… of a pool built from fields), not only its connection string
      const client = new pg.Client(pool.options as pg.ClientConfig);
      client.on('error', () => undefined);
      await client.connect();
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify();
      });
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.end().catch(() => undefined);
      };
    },
    close() {
      closing ??= ownsPool ? pool.end() : Promise.resolve();
      return closing;
    },
  };
}
