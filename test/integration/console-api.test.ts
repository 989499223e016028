// Issue 30 item 1: the console's server on the real PostgreSQL. Roles enforced on the server, CSRF on every action,
// the read-only mode, the audit log, your own auth hook, a redrive job's progress and its later-event warning, and a
// record's markup going out as JSON text only.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { type TestContext, test } from 'node:test';
import { changesDatabase } from '../../src/cli/database.ts';
import { type ConsoleOptions, createConsole } from '../../src/console/console.ts';
import { cli, cliEnv } from '../support/cli.ts';
import { hostileHeader, hostilePayload, seedConsole } from '../support/console-seed.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const tokens = { operator: 'op-token-for-tests', reader: 'reader-token-for-tests' };

async function started(t: TestContext, options: Omit<ConsoleOptions, 'db'> & { db: ConsoleOptions['db'] }) {
  const server = createConsole({ transport: 'postgres', tokens, ...options });
  const base = await server.start();
  t.after(() => server.close());
  return { server, base };
}

interface Call {
  token?: string;
  body?: unknown;
  csrf?: string;
  origin?: string;
}

async function call(base: string, path: string, options: Call = {}) {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.csrf) headers['x-csrf-token'] = options.csrf;
  if (options.origin) headers.origin = options.origin;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(base + path, {
    method: options.body === undefined ? 'GET' : 'POST',
    headers,
    redirect: 'manual',
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are asserted field by field below
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const csrfOf = async (base: string, token: string) => (await call(base, '/api/session', { token })).json.csrf as string;

test('console: logins, roles, CSRF, audit, and a redrive job with its warning', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const seeded = await seedConsole(db, schema);
  const { base, server } = await started(t, { db, schema });
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/, 'bound to loopback by default');
  assert.equal(server.links?.operator, `${base}/?token=${tokens.operator}`);

  // nobody: the page's own files only
  const page = await call(base, '/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  assert.equal((await call(base, '/api/health')).status, 401);
  assert.equal((await call(base, '/?token=wrong')).status, 401);
  const login = await call(base, `/?token=${tokens.reader}`);
  assert.equal(login.status, 303);
  assert.match(login.headers.get('set-cookie') ?? '', /^effectively_console=.+; HttpOnly; SameSite=Strict; Path=\//);

  // a reader sees everything
  const health = (await call(base, '/api/health', { token: tokens.reader })).json;
  assert.equal(health.deadLetters.dead, 3);
  assert.deepEqual(
    health.lag.map((p: { group: string; topic: string; lag: number }) => [p.group, p.topic, p.lag]),
    [['billing', 'orders', 0]],
  );
  assert.ok(health.alerts.some((a: { check: string }) => a.check === 'dead-letters'));
  const failures = (await call(base, '/api/failures', { token: tokens.reader })).json;
  assert.deepEqual(
    failures.groups.map((g: { count: number; errorClass: string }) => [g.count, g.errorClass]),
    [
      [2, 'PermanentError'],
      [1, 'TypeError'],
    ],
    'two letters of one cause whatever their ids, one of another',
  );
  assert.equal(failures.groups[0].message, 'order <uuid> has no seats left');
  const byTopic = (await call(base, '/api/failures?by=topic', { token: tokens.reader })).json;
  assert.equal(byTopic.groups[0].by, 'orders');
  const found = (await call(base, `/api/letters?q=${encodeURIComponent('<script>')}`, { token: tokens.reader })).json;
  assert.deepEqual(
    found.map((l: { id: string }) => l.id),
    [seeded.ids.script],
    'the payload search finds the one letter',
  );
  const applied = (await call(base, `/api/letters/${seeded.ids.applied}`, { token: tokens.reader })).json;
  assert.equal(applied.applied.byItsGroup, true, 'the dedup rows say it was applied after all');
  const script = (await call(base, `/api/letters/${seeded.ids.script}`, { token: tokens.reader })).json;
  assert.equal(script.applied.byItsGroup, false);
  assert.deepEqual(
    script.effects.map((e: { kind: string; status: string }) => [e.kind, e.status]),
    [['email:confirmation', 'pending']],
  );

  // a reader cannot act: refused on the server, and the refusal is in the audit log
  const readerCsrf = await csrfOf(base, tokens.reader);
  const refused = await call(base, '/api/jobs', {
    token: tokens.reader,
    csrf: readerCsrf,
    body: { ids: [seeded.ids.script] },
  });
  assert.equal(refused.status, 403);
  assert.match(refused.json.error, /operator role/);

  // an operator needs the CSRF token, and a foreign Origin is refused even with it
  const ids = [seeded.ids.script, seeded.ids.applied];
  const noCsrf = await call(base, '/api/jobs', { token: tokens.operator, body: { ids } });
  assert.equal(noCsrf.status, 403);
  assert.match(noCsrf.json.error, /CSRF/);
  const csrf = await csrfOf(base, tokens.operator);
  assert.notEqual(csrf, readerCsrf);
  const foreign = await call(base, '/api/jobs', {
    token: tokens.operator,
    csrf,
    origin: 'http://evil.test',
    body: { ids },
  });
  assert.equal(foreign.status, 403);
  assert.equal(
    (await call(base, '/api/jobs', { token: tokens.operator, csrf: readerCsrf, body: { ids } })).status,
    403,
  );

  // a dry run sends nothing
  const dry = await call(base, '/api/jobs', { token: tokens.operator, csrf, body: { ids, dryRun: true } });
  assert.equal(dry.status, 202);
  await eventually(
    async () => (await call(base, `/api/jobs/${dry.json.id}`, { token: tokens.reader })).json.status !== 'running',
  );
  const dryDone = (await call(base, `/api/jobs/${dry.json.id}`, { token: tokens.reader })).json;
  assert.deepEqual([dryDone.status, dryDone.done, dryDone.redriven], ['done', 2, 0]);

  // the job: warned that a later event of order-1 was applied, then done, the letters redriven into the log
  const job = await call(base, '/api/jobs', { token: tokens.operator, csrf, body: { ids, label: 'no seats' } });
  assert.equal(job.status, 202);
  assert.deepEqual(
    job.json.warnings.map((w: { id: string; key: string; later: number }) => [w.id, w.key, w.later]),
    [[seeded.ids.script, 'order-1', 1]],
  );
  await eventually(
    async () => (await call(base, `/api/jobs/${job.json.id}`, { token: tokens.reader })).json.status !== 'running',
  );
  const done = (await call(base, `/api/jobs/${job.json.id}`, { token: tokens.reader })).json;
  assert.deepEqual([done.status, done.done, done.total, done.redriven], ['done', 2, 2, 2]);
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.log_records`);
  assert.equal(rows[0]!.n, 6, 'two records appended to the log');
  assert.equal((await call(base, '/api/letters?status=redriven', { token: tokens.reader })).json.length, 2);

  const audit = (await call(base, '/api/audit', { token: tokens.reader })).json as {
    actor: string;
    action: string;
    outcome: string;
  }[];
  const seen = audit.map((a) => `${a.actor} ${a.action} ${a.outcome}`);
  assert.ok(seen.includes('token:reader POST /api/jobs refused'), seen.join('\n'));
  assert.ok(seen.includes('token:operator redrive started'));
  assert.ok(seen.includes('token:operator redrive done'));
  assert.equal(
    seen.filter((line) => line.endsWith('refused')).length,
    4,
    'reader, no CSRF, foreign origin, wrong CSRF',
  );
});

test('console: a rate-capped job is cancelled between steps', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const seeded = await seedConsole(db, schema);
  const { base } = await started(t, { db, schema });
  const csrf = await csrfOf(base, tokens.operator);
  const ids = [seeded.ids.script, seeded.ids.applied, seeded.ids.header];
  const job = (await call(base, '/api/jobs', { token: tokens.operator, csrf, body: { ids, ratePerSecond: 1 } })).json;
  await eventually(async () => (await call(base, `/api/jobs/${job.id}`, { token: tokens.reader })).json.done >= 1);
  assert.equal(
    (await call(base, `/api/jobs/${job.id}/cancel`, { token: tokens.operator, csrf, body: {} })).status,
    200,
  );
  await eventually(
    async () => (await call(base, `/api/jobs/${job.id}`, { token: tokens.reader })).json.status !== 'running',
  );
  const ended = (await call(base, `/api/jobs/${job.id}`, { token: tokens.reader })).json;
  assert.equal(ended.status, 'cancelled');
  assert.ok(ended.redriven >= 1 && ended.redriven < 3, `redriven ${ended.redriven} of 3 before the cancel`);
  assert.equal((await call(base, '/api/letters', { token: tokens.reader })).json.length, 3 - ended.redriven);
});

test('console: read-only refuses every action, even an operator with the CSRF token', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const seeded = await seedConsole(db, schema);
  for (const [options, field] of [
    [{ tokens: { operator: 'short' } }, 'tokens.operator'],
    [{ tokens: { operator: 'same-token-for-both', reader: 'same-token-for-both' } }, 'tokens'],
    [{ port: 70000 }, 'port'],
    [{ basePath: 'ops' }, 'basePath'],
  ] as const)
    assert.throws(() => createConsole({ db, ...options }), { code: 'EFF_INVALID_OPTIONS', details: { field } });
  const { base } = await started(t, { db, schema, readOnly: true });
  const session = (await call(base, '/api/session', { token: tokens.operator })).json;
  assert.equal(session.readOnly, true);
  for (const [path, body] of [
    ['/api/jobs', { ids: [seeded.ids.script] }],
    ['/api/letters/discard', { ids: [seeded.ids.script] }],
  ] as const) {
    const answer = await call(base, path, { token: tokens.operator, csrf: session.csrf, body });
    assert.equal(answer.status, 403, path);
    assert.match(answer.json.error, /read-only/);
  }
  assert.equal((await call(base, '/api/letters', { token: tokens.reader })).json.length, 3, 'nothing changed');
});

test('console: /metrics serves the Prometheus text to the reader role, and only as told', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await seedConsole(db, schema);
  const { base } = await started(t, { db, schema });
  assert.equal((await call(base, '/metrics')).status, 401, 'no token, no metrics');
  const scrape = await call(base, '/metrics', { token: tokens.reader });
  assert.equal(scrape.status, 200);
  assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  assert.match(scrape.text, /^effectively_dead_letters 3$/m, 'the three seeded letters');
  const open = await started(t, { db, schema, metrics: 'public' });
  assert.match((await call(open.base, '/metrics')).text, /^effectively_dead_letters 3$/m);
  const none = await started(t, { db, schema, metrics: false });
  assert.equal((await call(none.base, '/metrics', { token: tokens.operator })).status, 404);
  assert.throws(() => createConsole({ db, metrics: 'everyone' as never }), {
    code: 'EFF_INVALID_OPTIONS',
    details: { field: 'metrics' },
  });
});

test("console: the application's own auth hook decides who is who", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const seeded = await seedConsole(db, schema);
  const { base, server } = await started(t, {
    db,
    schema,
    authenticate: (request) => {
      const who = request.headers['x-user'];
      if (who === 'ana') return { name: 'ana', role: 'operator' };
      if (who === 'bruno') return { name: 'bruno', role: 'reader' };
      return undefined;
    },
  });
  assert.equal(server.links, undefined, 'no token links with a hook');
  assert.equal((await fetch(`${base}/api/health`)).status, 401);
  assert.equal(
    (await fetch(`${base}/api/health`, { headers: { authorization: `Bearer ${tokens.operator}` } })).status,
    401,
  );
  const session = (await (await fetch(`${base}/api/session`, { headers: { 'x-user': 'ana' } })).json()) as {
    csrf: string;
  };
  const discard = (who: string) =>
    fetch(`${base}/api/letters/discard`, {
      method: 'POST',
      headers: { 'x-user': who, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [seeded.ids.header] }),
    });
  assert.equal((await discard('bruno')).status, 403);
  const done = await discard('ana');
  assert.equal(done.status, 200);
  assert.deepEqual(await done.json(), { discarded: 1 });
  const { rows } = await db.query<{ actor: string; action: string; outcome: string }>(
    `SELECT actor, action, outcome FROM ${schema}.console_audit ORDER BY id`,
  );
  assert.deepEqual(
    rows.map((r) => `${r.actor} ${r.action} ${r.outcome}`),
    ['bruno POST /api/letters/discard refused', 'ana discard done'],
  );
});

test("console: a record's markup leaves the server as JSON text, never as markup", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const seeded = await seedConsole(db, schema);
  const { base } = await started(t, { db, schema });
  for (const id of [seeded.ids.script, seeded.ids.header]) {
    const answer = await call(base, `/api/letters/${id}`, { token: tokens.reader });
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
    assert.doesNotMatch(answer.text, /<script|<img/i, 'no raw markup in the bytes');
    if (id === seeded.ids.script) assert.equal(answer.json.payload, hostilePayload, 'the payload whole, as text');
    else assert.equal(answer.json.headers['x-note'], hostileHeader, 'the header whole, as text');
  }
  const list = await call(base, '/api/letters', { token: tokens.reader });
  assert.doesNotMatch(list.text, /<script|<img/i);
  const page = await call(base, '/');
  assert.doesNotMatch(page.text, /__xss/, 'the page itself holds no record');
});

test('effectively console: the links at start, DATABASE_URL asked for, a stop on SIGINT', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  // like every command that changes the database it asks for DATABASE_URL; read-only (passed as a dry run) does not
  assert.equal(changesDatabase('console', undefined, false), true);
  assert.equal(changesDatabase('console', undefined, true), false);

  const child = spawn(
    process.execPath,
    [cli, 'console', '--port', '0', '--schema', schema, '--transport', 'postgres'],
    {
      env: cliEnv({ EFFECTIVELY_CONSOLE_TOKEN: tokens.operator }),
    },
  );
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await eventually(async () => /reader: /.test(out), 15_000, 'the links');
  const operatorLink = /operator: (\S+)/.exec(out)![1]!;
  assert.match(operatorLink, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?token=${tokens.operator}$`));
  const base = new URL(operatorLink).origin;
  assert.equal((await call(base, '/api/health', { token: tokens.operator })).status, 200);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
  assert.match(out, /console: stopped/);
});
