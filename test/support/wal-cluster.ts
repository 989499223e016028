// A private PostgreSQL cluster with logical decoding (scripts/postgres.sh, its own home under the system's temporary
// directory), shared by the WAL relay tests of one file and stopped after them. The machine's shared server is never
// touched (its wal_level is replica).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { randomName } from './fixtures.ts';

const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));

export interface WalCluster {
  url: string;
  /** `postgres.sh` with this cluster's home (start, stop, restart...). */
  sh(command: string, env?: Record<string, string>): string;
  /** A migrated schema of its own on this cluster, and a Db on it. */
  schema(): Promise<{ db: Db; schema: string }>;
  close(): Promise<void>;
}

export async function walCluster(): Promise<WalCluster> {
  const home = mkdtempSync(join(tmpdir(), 'effectively-wal-'));
  const sh = (command: string, env: Record<string, string> = {}) =>
    execFileSync('bash', [script, command], {
      env: { ...process.env, PG_HOME_DIR: home, PG_PRIVATE_PORT: '21410', ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  sh('start');
  const url = sh('url');
  const dbs: Db[] = [];
  return {
    url,
    sh,
    async schema() {
      const db = pgDb({ connectionString: url, max: 4 });
      dbs.push(db);
      const schema = randomName('w');
      await migrate(db, { schema });
      return { db, schema };
    },
    async close() {
      for (const db of dbs) await db.close().catch(() => undefined);
      sh('stop');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
