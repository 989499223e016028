// `effectively sender` and `effectively effects` against the real PostgreSQL and the reference e-mail provider.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { startEmailProvider } from '../../examples/email-provider/server.ts';
import { createEffects, type Effect } from '../../src/effects/ledger.ts';
import { cli, cliEnv, runCli } from '../support/cli.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const run = runCli;

test('sender sends each scheduled effect exactly once, prints its stats on SIGTERM; effects list and revive', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const provider = await startEmailProvider();
  t.after(() => provider.close());
  const effects = createEffects({ schema });
  const ids = await db.transaction(async (tx) => {
    const scheduled: string[] = [];
    for (let n = 1; n <= 5; n++) {
      const payload = { to: `guest${n}@example.com`, subject: `Order ${n} confirmed`, text: 'Thanks' };
      scheduled.push(await effects.schedule(tx, { key: `order-${n}`, kind: 'email', payload }));
    }
    return scheduled;
  });
  const bad = await db.transaction((tx) =>
    effects.schedule(tx, { key: 'order-6', kind: 'email', payload: { to: 'nobody', subject: 's' } }),
  );
  await db.transaction((tx) => effects.schedule(tx, { key: 'order-7', kind: 'sms', payload: { to: '+1' } }));

  const args = ['sender', '--url', `${provider.url}/emails`, '--body', 'payload', '--schema', schema];
  const child = spawn(process.execPath, [cli, ...args, '--kinds', 'email', '--rate', '50', '--concurrency', '2'], {
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  await eventually(
    async () => (await effects.count(db, 'done', 'email')) === 5 && (await effects.count(db, 'dead')) === 1,
    30_000,
    `5 e-mails done and 1 dead (stderr: ${stderr})`,
  );
  for (const id of ids) assert.equal(provider.sendsFor(id), 1, `effect ${id} sent once`);
  assert.equal(provider.sends, 5);
  assert.equal(await effects.count(db, 'pending', 'sms'), 1, 'another kind: untouched');

  child.kill('SIGTERM');
  const [code] = await exited;
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^sender: calls=6 done=5 retried=0 dead=1 timeouts=0 settled_by_lookup=0 unrecorded=0$/m);

  const dead = await run('effects', 'list', '--status', 'dead', '--schema', schema, '--json');
  assert.equal(dead.code, 0);
  assert.deepEqual(
    (JSON.parse(dead.stdout) as Effect[]).map((e) => [e.id, e.lastCode]),
    [[bad, 'EFF_PROVIDER_PERMANENT']],
  );
  const listed = await run('effects', 'list', '--kind', 'email', '--schema', schema);
  assert.match(listed.stdout, /^effects: listed 6$/m);
  assert.match((await run('effects', 'revive', '--ids', bad, '--schema', schema)).stdout, /^effects: revived 1$/m);
  assert.equal((await effects.list(db, { ids: [bad] }))[0]?.status, 'pending');
  assert.equal((await run('effects', 'revive', '--schema', schema)).code, 2, 'revive wants ids');
  assert.equal((await run('sender', '--schema', schema)).code, 2, 'sender wants --url');
});
