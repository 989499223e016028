import pg from 'pg';
import { invalidOptions, transactionAborted, transactionEndedEarly } from '../errors.ts';
import { notMigrated, rethrowNotMigrated } from './not-migrated.ts';
import type { Db, Queryable } from './port.ts';
import { type SingleSessionGuard, singleSessionGuard } from './single-session.ts';
import { sqlState } from './sqlstate.ts';
import { isWatchdogTimeout, watched } from './watchdog.ts';

/** A statement that got no answer (the library's watchdog or the pool's), whatever wraps it (EFF_TX_ABORTED's cause). */
function silent(error: unknown): boolean {
  for (let at = error, depth = 0; at !== undefined && at !== null && depth < 8; depth++) {
    if (isWatchdogTimeout(at) || (at as { code?: unknown }).code === 'EFF_DB_NO_ANSWER') return true;
    // the cause of a coded error, or the error a consumer's HandlerFailure carries
    at = (at as { cause?: unknown }).cause ?? (at as { error?: unknown }).error;
  }
  return false;
}

export interface PgDbOptions {
  /** Default `DATABASE_URL` or `postgres://postgres@127.0.0.1:5432/postgres`. */
  connectionString?: string;
  /**
   * Pool size for the library's own work (default 4; left out, a consumer grows it at start to the transactions it runs
   * at once plus one; given, a consumer that needs more is refused with `EFF_POOL_TOO_SMALL`). With 1, a transaction or
   * query asked of the Db from inside one of its own transactions is refused (`EFF_NESTED_TRANSACTION`) instead of
   * waiting for the connection it holds.
   */
  max?: number;
  /**
   * Server-side `statement_timeout` of each session (default 60,000 ms; 0 turns it off; a `statement_timeout`
   * parameter of the connection string takes precedence, and likewise for the next option). The library's longest
   * statements (a relay chunk read or delete, a purge batch, a migration of today's schema) take at most seconds, a
   * chunk of large rows included; a statement that runs a minute waits on a lock something stuck holds. A long migration of your
   * own can lift it for its transaction with `SET LOCAL statement_timeout = 0` (the client watchdog below still
   * applies: run it on a `pgDb({ statementTimeoutMs: 0 })`).
   */
  statementTimeoutMs?: number;
  /**
   * Server-side `idle_in_transaction_session_timeout` (default 60,000 ms; 0 turns it off): the server ends a session
   * that sits in an open transaction this long without a statement, which releases its locks (a relay's shard locks)
   * when the process froze or the network went silent. A relay pass is idle in its transaction while the broker
   * acknowledges a chunk, and a consumer's transaction while your handler awaits something else: a wait longer than
   * this ends the transaction (rolled back, retried; the relay's chunk is sent again, a duplicate consumers absorb).
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * Client-side watchdog (node-postgres `query_timeout`): a query with no answer after this long is failed and its
   * connection discarded, so a process whose connection went silent recovers instead of waiting for ever (TCP alone
   * notices after many minutes). Default: `statementTimeoutMs` + 30,000 ms (off when that is 0); 0 turns it off.
   * It bounds a handler's statements in the consumer's transaction (which may legitimately run long); the library's
   * own statements have the shorter `libraryQueryTimeoutMs`.
   */
  queryTimeoutMs?: number;
  /**
   * Client-side watchdog on the library's own statements (BEGIN, COMMIT and ROLLBACK, the dedup claim, the relay's
   * reads and deletes, offsets, leases, migrations, and whatever else is sent through the Db itself: `db.query`, the
   * `tx` of `db.transaction` outside a handler). They answer in milliseconds on a healthy network, so a silent
   * connection (a COMMIT whose answer is lost, a half-open socket) fails with `EFF_DB_NO_ANSWER` after this long,
   * its connection discarded, instead of after the longer `queryTimeoutMs`. Default 10,000 ms, or `queryTimeoutMs`
   * when that is shorter; off (0) when `queryTimeoutMs` is off. A statement of your own sent through `db.transaction`
   * that may run longer needs a larger value (or your own pool). It is client-side only: the server's
   * `statement_timeout` is unchanged.
   */
  libraryQueryTimeoutMs?: number;
  /** Most time to open a connection, TLS and authentication included (default 10,000 ms; 0: no limit). */
  connectionTimeoutMs?: number;
  /**
   * TCP keepalive's first probe after this much silence (default 10,000 ms; 0 turns keepalive off), so a dead peer
   * of an idle connection is noticed (the later probes follow the operating system's interval and count).
   */
  keepAliveDelayMs?: number;
  /**
   * TLS to the server. `true`: verified against the system's authorities. An object: `ca` (PEM of the authority that
   * signed the server's certificate), `certificate` and `key` (PEM, a client certificate), `verify` (default true:
   * the certificate and the host name are checked; `false` encrypts without knowing who answers). Default: none, or
   * what the connection string says (`sslmode=verify-full&sslrootcert=ca.pem`), which takes precedence.
   */
  ssl?: boolean | { ca?: string; certificate?: string; key?: string; verify?: boolean };
}

function tlsOf(ssl: PgDbOptions['ssl']): pg.PoolConfig['ssl'] {
  if (ssl === undefined || typeof ssl === 'boolean') return ssl;
  if (typeof ssl !== 'object' || ssl === null) throw invalidOptions('ssl', 'true, false or an object');
  return {
    ...(ssl.ca !== undefined && { ca: ssl.ca }),
    ...(ssl.certificate !== undefined && { cert: ssl.certificate }),
    ...(ssl.key !== undefined && { key: ssl.key }),
    rejectUnauthorized: ssl.verify !== false,
  };
}

/** The session and socket settings of a pool `pgDb` makes (see `PgDbOptions` for each default and why). */
export function pgPoolConfig(options: PgDbOptions = {}): pg.PoolConfig {
  const connectionString = options.connectionString ?? defaultDatabaseUrl();
  // A connection string's own parameter (`?statement_timeout=0`, e.g. in DATABASE_URL for the CLI) is what
  // node-postgres sends, over the option: the watchdog below follows it too.
  const fromUrl = (name: string) => {
    const value = URL.canParse(connectionString) ? new URL(connectionString).searchParams.get(name) : null;
    return value === null ? undefined : Number(value);
  };
  const statementTimeout = fromUrl('statement_timeout') ?? options.statementTimeoutMs ?? 60_000;
  const idleInTransaction =
    fromUrl('idle_in_transaction_session_timeout') ?? options.idleInTransactionTimeoutMs ?? 60_000;
  const queryTimeout = options.queryTimeoutMs ?? (statementTimeout > 0 ? statementTimeout + 30_000 : 0);
  const libraryQueryTimeout = libraryWatchdogMs(options.libraryQueryTimeoutMs, queryTimeout);
  const keepAliveDelay = options.keepAliveDelayMs ?? 10_000;
  const connectionTimeout = options.connectionTimeoutMs ?? 10_000;
  const given = {
    statementTimeout,
    idleInTransaction,
    queryTimeout,
    libraryQueryTimeout,
    connectionTimeout,
    keepAliveDelay,
  };
  for (const [name, value] of Object.entries(given)) {
    if (!Number.isInteger(value) || value < 0 || value > 2 ** 31 - 1) {
      throw invalidOptions(`${name}Ms`, 'an integer number of milliseconds in 0..2147483647');
    }
  }
  const ssl = tlsOf(options.ssl);
  return {
    connectionString,
    ...(ssl !== undefined && { ssl }),
    max: options.max ?? 4,
    // node-postgres sends these as startup parameters: every session of the pool, and the LISTEN client, has them.
    // A value of 0 (off) is left out, so the server's own setting applies.
    ...(statementTimeout > 0 && { statement_timeout: statementTimeout }),
    ...(idleInTransaction > 0 && { idle_in_transaction_session_timeout: idleInTransaction }),
    ...(queryTimeout > 0 && { query_timeout: queryTimeout }),
    connectionTimeoutMillis: connectionTimeout,
    keepAlive: keepAliveDelay > 0,
    keepAliveInitialDelayMillis: keepAliveDelay,
  };
}

/** The library's own watchdog (see `libraryQueryTimeoutMs`): 10 s, or the pool's when shorter; off with the pool's. */
function libraryWatchdogMs(given: number | undefined, queryTimeout: number): number {
  if (given !== undefined) return given;
  return queryTimeout > 0 ? Math.min(10_000, queryTimeout) : 0;
}

/** The pool's watchdog and the library's, as `pgDb` sets them (0: off). */
export function pgWatchdogs(options: PgDbOptions = {}): { queryTimeoutMs: number; libraryQueryTimeoutMs: number } {
  const config = pgPoolConfig(options);
  const queryTimeoutMs = Number(config.query_timeout ?? 0);
  return { queryTimeoutMs, libraryQueryTimeoutMs: libraryWatchdogMs(options.libraryQueryTimeoutMs, queryTimeoutMs) };
}

export function defaultDatabaseUrl(): string {
  return process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/**
 * A Db on a PostgreSQL server through `pg` (node-postgres). Pass your own pool (its settings are kept as they are),
 * or let it make one with the timeouts and keepalive of `PgDbOptions`. On a pool of one connection (`max: 1`) a
 * transaction or query asked of this Db from inside one of its own transactions is refused at once with
 * `EFF_NESTED_TRANSACTION`: it would wait for the connection that very transaction holds (see `single-session.ts`).
 */
export function pgDb(source: pg.Pool | PgDbOptions = {}): Db {
  const pool = source instanceof pg.Pool ? source : new pg.Pool(pgPoolConfig(source));
  const watchdogs = source instanceof pg.Pool ? undefined : pgWatchdogs(source);
  const sizedByLibrary = !(source instanceof pg.Pool) && source.max === undefined;
  return poolDb(pool, {
    ownsPool: !(source instanceof pg.Pool),
    guarded: pool.options.max === 1,
    sizedByLibrary,
    ...(watchdogs && { libraryQueryTimeoutMs: watchdogs.libraryQueryTimeoutMs }),
  });
}

/**
 * The Db of a pool. `guarded`: refuse re-entrance (a pool of one connection); off only for PGlite's and the tests'
 * naive twins, to show the wait the guard prevents. `libraryQueryTimeoutMs`: the watchdog of the library's own
 * statements (watchdog.ts; absent or 0: the pool's own, e.g. PGlite's none).
 */
export function poolDb(
  pool: pg.Pool,
  options: { ownsPool: boolean; guarded: boolean; sizedByLibrary?: boolean; libraryQueryTimeoutMs?: number },
): Db {
  const { ownsPool } = options;
  const ownMs = options.libraryQueryTimeoutMs ?? 0;
  const handlerMs = Number(pool.options.query_timeout ?? 0) || undefined;
  const poolView = watched(pool as never, ownMs, undefined);
  const guard: SingleSessionGuard | undefined = options.guarded ? singleSessionGuard() : undefined;
  // An idle client that loses its server emits 'error' on the pool; without a listener that would crash the process.
  pool.on('error', () => undefined);
  let closing: Promise<void> | undefined;
  // node-postgres reads `options.max` at each checkout: raising it lets the pool open more connections from then on.
  const growTo = (atLeast: number) => {
    if (atLeast > pool.options.max) pool.options.max = atLeast;
  };
  return {
    get connections() {
      return pool.options.max;
    },
    ...(options.sizedByLibrary === true && { growTo }),
    // a library table missing (never migrated) becomes EFF_NOT_MIGRATED, naming the command to run
    async query(text, params) {
      guard?.refuseInside('query');
      return poolView.query(text, params).catch(rethrowNotMigrated) as never;
    },
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      guard?.refuseInside('transaction');
      const client = await pool.connect();
      let broken: unknown;
      // A checked-out client whose server goes away emits 'error' (the pool only listens on idle ones): without this
      // listener that would crash the process. The failing query rejects as well, which is what the caller handles.
      const onError = (error: unknown) => {
        // the server's coded reason comes first, then the socket's "Connection terminated": keep the reason
        if (broken === undefined || sqlState(error) !== undefined) broken = error;
      };
      client.on('error', onError);
      // The library's statements on the short watchdog; a handler's through handlerStatements(tx), the pool's.
      const tx = watched(client as never, ownMs, handlerMs ?? 0);
      try {
        await tx.query('BEGIN');
        const result = await (guard ? guard.within(() => work(tx)) : work(tx));
        // The work ended the transaction itself (a COMMIT or ROLLBACK its statements carried past every check): what
        // ran after that is not in it, and a COMMIT now would only warn. Say so instead of reporting it committed.
        if ((client as { getTransactionStatus?: () => string | null }).getTransactionStatus?.() === 'I')
          throw transactionEndedEarly();
        // A transaction a failed statement aborted answers COMMIT with a ROLLBACK tag, not an error: check the tag.
        const committed = (await tx.query('COMMIT')) as { command?: string };
        if (committed.command !== 'COMMIT') throw transactionAborted(`COMMIT answered ${committed.command}`);
        return result;
      } catch (thrown) {
        // The server ended the session (its idle-in-transaction timeout: 25P03, a terminate: 57P01): node-postgres fails
        // the next query only with "... is not queryable", no code; the server's own error came on 'error'. Throw that.
        const error = sqlState(thrown) === undefined && sqlState(broken) !== undefined ? broken : thrown;
        if (silent(thrown)) {
          // A statement got no answer: its connection is silent (or still busy with it), and a ROLLBACK would wait
          // behind it for a second watchdog. The connection is discarded instead; the server ends the session.
          broken = thrown;
        } else {
          await tx.query('ROLLBACK').catch((rollbackError: unknown) => {
            broken = rollbackError;
          });
        }
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
