// A private PostgreSQL cluster with logical decoding (scripts/postgres.sh, its own home under the system's temporary
// directory), shared by the WAL relay tests of one file and stopped after them. The machine's shared server is never
// touched (its wal_level is replica).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { eventually, randomName } from './fixtures.ts';
import { freePorts } from './kafka-script.ts';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));

export interface WalCluster {
  url: string;
  /**
   * `postgres.sh` with this cluster's home (start, stop, restart...). Never run it synchronously while a WAL relay of
   * this process streams: a fast shutdown waits for the walsender's client to confirm what it was sent.
   */
  sh(command: string, env?: Record<string, string>): Promise<string>;
  /** A migrated schema of its own on this cluster, and a Db on it. */
  schema(): Promise<{ db: Db; schema: string }>;
  close(): Promise<void>;
}

export async function walCluster(): Promise<WalCluster> {
  const home = mkdtempSync(join(tmpdir(), 'effectively-wal-'));
  const sh = async (command: string, env: Record<string, string> = {}) =>
    (
      await run('bash', [script, command], { env: { ...process.env, PG_HOME_DIR: home, ...env }, encoding: 'utf8' })
    ).stdout.trim();
  // A free port of its own (files run side by side, each with its cluster); later starts keep the port it got.
  await sh('start', { PG_PRIVATE_PORT: String(await freePorts(1)) });
  const url = await sh('url');
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
      await sh('stop');
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Resolves once a WAL relay of `schema` made its slot (and published the rows of the table it will not stream). */
export async function slotReady(db: Db, schema: string): Promise<void> {
  await eventually(
    async () => (await db.query(`SELECT 1 FROM ${schema}.settings WHERE name LIKE 'wal.slot.%'`)).rows.length > 0,
    20_000,
    'the slot made',
  );
}

/** A cluster for the tests of one file: started before them, stopped after them. */
export function walClusterPerFile(): () => WalCluster {
  let cluster: WalCluster | undefined;
  before(async () => {
    cluster = await walCluster();
  });
  after(async () => {
    await cluster?.close();
  });
  return () => cluster!;
}
