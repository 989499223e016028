/** What the library needs of a database connection: `pg.Client`, `pg.PoolClient` and `pg.Pool` all fit. */
export interface Queryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** A database the library can open its own transactions on (relay, consumer). The caller's own writes use theirs. */
export interface Db extends Queryable {
  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Calls `onNotify` on each NOTIFY of `channel` until the returned function is called. Optional: polling still works. */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** How many transactions can run at once (the pool's size; 1 for a single session), when known. */
  readonly connections?: number;
  /**
   * Present only on a pool whose size the library chose (a `pgDb` made without `max`): raises its size to `atLeast`
   * connections (never lowers it). A consumer calls it at start to fit the pool to the transactions it runs at once.
   */
  growTo?(atLeast: number): void;
  close(): Promise<void>;
}
