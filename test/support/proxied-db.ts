// PostgreSQL seen through the chaos kit's fault proxy: a pool whose every connection crosses a network the test can
// slow, cut or silence. The proxy and the pool are closed after the test.
import type { TestContext } from 'node:test';
import { type FaultProxy, faultProxy } from '../../scenarios/chaos/fault-proxy.ts';
import { defaultDatabaseUrl, type PgDbOptions, pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';

export async function proxiedDb(t: TestContext, options: PgDbOptions = {}): Promise<{ db: Db; proxy: FaultProxy }> {
  const url = new URL(defaultDatabaseUrl());
  const proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db = pgDb({ connectionString: url.toString(), max: 2, connectionTimeoutMs: 1000, ...options });
  t.after(async () => {
    // A silent session holds its locks until its socket closes: cut it before the pool waits on it.
    await proxy.close().catch(() => undefined);
    await db.close().catch(() => undefined);
  });
  return { db, proxy };
}
