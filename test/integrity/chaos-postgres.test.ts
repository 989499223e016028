// The private PostgreSQL cluster of the chaos kit (scripts/postgres.sh): a port held by another process (another
// checkout's cluster, a stale one) does not stop it — it takes a free port and `url` names it; a second start reuses
// the running cluster; two clusters started at once get different ports; the kit restarts a moved cluster in place.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startPrivatePostgres } from '../../scenarios/chaos/private-postgres.ts';
import { pgDb } from '../../src/db/pg.ts';
import { freePorts } from '../support/kafka-script.ts';

const script = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));

/** postgres.sh with its own home (stopped and deleted after the test) and the wanted port. */
function privateCluster(t: TestContext, port: number) {
  const home = mkdtempSync(join(tmpdir(), 'effectively-pg-'));
  const env = { ...process.env, PG_HOME_DIR: home, PG_PRIVATE_PORT: String(port) };
  const run = (command: string) => spawnSync('bash', [script, command], { env, encoding: 'utf8', timeout: 120_000 });
  const started = (command = 'start') =>
    new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn('bash', [script, command], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('exit', (status) => resolve({ status, stderr }));
    });
  t.after(() => {
    run('stop');
    rmSync(home, { recursive: true, force: true });
  });
  return { run, started, url: () => run('url').stdout.trim() };
}

async function answers(url: string): Promise<number> {
  const db = pgDb({ connectionString: url, max: 1 });
  try {
    const { rows } = await db.query<{ one: number }>('SELECT 1 AS one');
    return rows[0]!.one;
  } finally {
    await db.close();
  }
}

test('postgres.sh start: its port held by another process, it takes a free one and url names it', async (t) => {
  const port = await freePorts(1);
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  t.after(() => holder.close());
  const cluster = privateCluster(t, port);
  const first = await cluster.started();
  assert.equal(first.status, 0, first.stderr);
  const url = cluster.url();
  assert.notEqual(new URL(url).port, String(port), url);
  assert.equal(await answers(url), 1);
  // A second start reuses the running cluster, on the same port.
  const again = cluster.run('start');
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stderr, /already running/);
  assert.equal(cluster.url(), url);
  // Stopped and started again with the port free now: back on the wanted port, and url follows.
  holder.close();
  assert.equal(cluster.run('stop').status, 0);
  assert.equal((await cluster.started()).status, 0);
  assert.equal(new URL(cluster.url()).port, String(port));
  assert.equal(await answers(cluster.url()), 1);
});

test('postgres.sh start: two clusters started at once on the same wanted port both run, on different ports', async (t) => {
  const port = await freePorts(1);
  const a = privateCluster(t, port);
  const b = privateCluster(t, port);
  const [startedA, startedB] = await Promise.all([a.started(), b.started()]);
  assert.equal(startedA.status, 0, startedA.stderr);
  assert.equal(startedB.status, 0, startedB.stderr);
  assert.notEqual(a.url(), b.url());
  assert.deepEqual(await Promise.all([answers(a.url()), answers(b.url())]), [1, 1]);
});

test('the kit restarts a cluster that moved to another port on that same port (its children hold the URL)', async (t) => {
  const port = await freePorts(1);
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  const home = mkdtempSync(join(tmpdir(), 'effectively-pg-'));
  const wanted = process.env.PG_PRIVATE_PORT;
  process.env.PG_PRIVATE_PORT = String(port);
  t.after(() => {
    if (wanted === undefined) delete process.env.PG_PRIVATE_PORT;
    else process.env.PG_PRIVATE_PORT = wanted;
    spawnSync('bash', [script, 'stop'], { env: { ...process.env, PG_HOME_DIR: home } });
    rmSync(home, { recursive: true, force: true });
  });
  const cluster = await startPrivatePostgres(home);
  assert.notEqual(new URL(cluster.url).port, String(port));
  // The wanted port is free again while the cluster is down: it must not move there.
  await new Promise((resolve) => holder.close(resolve));
  assert.ok((await cluster.restart(100)) > 0);
  assert.equal(await answers(cluster.url), 1);
});
