// Issue 30 item 1: the console mounted in the application's own HTTP server under /ops, on an embedded PGlite that
// no other process may open: the lag of the embedded log in records and seconds, and a redrive into that same log
// (the transport an embedded Db implies).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createConsole } from '../../src/console/console.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { seedConsole } from '../support/console-seed.ts';
import { eventually } from '../support/fixtures.ts';

// biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are asserted field by field
const json = async (response: Response | Promise<Response>): Promise<any> => (await response).json();

test('console: mounted under /ops in the application, on PGlite', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db, { schema: 'effectively' });
  const seeded = await seedConsole(db, 'effectively');
  await db.query('UPDATE effectively.log_offsets SET next_offset = 1'); // three records wait behind the group
  const ops = createConsole({
    db,
    basePath: '/ops',
    tokens: { operator: 'operator-token-1234', reader: 'reader-token-12345' },
  });
  const app = createServer((request, response) => {
    if (request.url?.startsWith('/ops')) return void ops.handle(request, response);
    response.end('the application');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    await ops.close();
    await new Promise((resolve) => app.close(resolve));
  });
  const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  const auth = { authorization: 'Bearer operator-token-1234' };
  assert.equal(await (await fetch(`${base}/`)).text(), 'the application');
  assert.equal(ops.links?.operator, '/ops/?token=operator-token-1234', 'a path on your server when you mount it');
  const login = await fetch(`${base}/ops/?token=operator-token-1234`, { redirect: 'manual' });
  assert.equal(login.headers.get('location'), '/ops/');
  assert.match(login.headers.get('set-cookie') ?? '', /Path=\/ops/);
  assert.match(await (await fetch(`${base}/ops/`)).text(), /<title>effectively console<\/title>/);

  const health = await json(fetch(`${base}/ops/api/health`, { headers: auth }));
  assert.equal(health.transport, 'postgres', 'an embedded Db implies its own log');
  const [lag] = health.lag as { group: string; lag: number; lagSeconds: number | null }[];
  assert.equal(lag?.lag, 3);
  assert.ok(lag.lagSeconds !== null && lag.lagSeconds >= 0, 'seconds known on the embedded log');

  const { csrf } = await json(fetch(`${base}/ops/api/session`, { headers: auth }));
  const started = await fetch(`${base}/ops/api/jobs`, {
    method: 'POST',
    headers: { ...auth, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ ids: [seeded.ids.header] }),
  });
  assert.equal(started.status, 202);
  const job = await json(started);
  const read = () => json(fetch(`${base}/ops/api/jobs/${job.id}`, { headers: auth }));
  await eventually(async () => (await read()).status !== 'running', 10_000, 'the job');
  const done = await read();
  assert.deepEqual([done.status, done.redriven], ['done', 1]);
  assert.match(done.target, /^postgres: the embedded log/);
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM effectively.log_records');
  assert.equal(rows[0]!.n, 5, 'appended to the embedded log');
});
