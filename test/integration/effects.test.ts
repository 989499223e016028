// Effects: scheduled once per (key, kind) in the handler's transaction, performed by senders with the effect's id as
// idempotency key, against the reference e-mail provider. Real PostgreSQL (skipped without it) and PGlite.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { type TestContext, test } from 'node:test';
import { emailProviderClient } from '../../examples/email-provider/client.ts';
import { type EmailProvider, startEmailProvider } from '../../examples/email-provider/server.ts';
import { maxPerWindow } from '../../src/backpressure/rate-window.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import type { EffectProvider, PendingEffect } from '../../src/effects/provider.ts';
import { createSender, type Sender, type SenderOptions } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

type Env = { db: Db; schema: string };

const databases: [string, (t: TestContext) => Promise<Env | undefined>][] = [
  ['postgres', async (t) => ((await needs(t, 'postgres')) ? freshSchema(t) : undefined)],
  [
    'pglite',
    async (t) => {
      const db = await pgliteDb();
      t.after(() => db.close());
      await migrate(db, { schema: 'fx' });
      return { db, schema: 'fx' };
    },
  ],
];

async function provider(t: TestContext): Promise<EmailProvider> {
  const server = await startEmailProvider();
  t.after(() => server.close());
  return server;
}

const email = (n: number | string) => ({
  to: `guest-${n}@example.com`,
  subject: `Order ${n} confirmed`,
  text: 'Thanks',
});

async function scheduleOrders(env: Env, count: number, kind = 'email:confirmation'): Promise<string[]> {
  const effects = createEffects({ schema: env.schema });
  return env.db.transaction(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(await effects.schedule(tx, { key: `order-${i}`, kind, payload: email(i) }));
    return ids;
  });
}

function sender(env: Env, options: Partial<SenderOptions> & Pick<SenderOptions, 'provider'>): Sender {
  return createSender({
    db: env.db,
    schema: env.schema,
    logger: silentLogger,
    pollIntervalMs: 20,
    retry: { baseMs: 1, capMs: 20 },
    ...options,
  });
}

async function statuses(env: Env): Promise<Record<string, number>> {
  const { rows } = await env.db.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM ${env.schema}.effects GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

for (const [name, open] of databases) {
  test(`${name}: the same effect scheduled twice is one row with one id; a rolled-back schedule is none`, async (t) => {
    const env = await open(t);
    if (!env) return;
    const effects = createEffects({ schema: env.schema });
    const input = { key: 'order-1', kind: 'email:confirmation', payload: email(1) };
    const first = await env.db.transaction((tx) => effects.schedule(tx, input));
    const second = await env.db.transaction((tx) => effects.schedule(tx, { ...input, payload: { other: true } }));
    assert.equal(second, first);
    const other = await env.db.transaction((tx) => effects.schedule(tx, { ...input, kind: 'sms:confirmation' }));
    assert.notEqual(other, first, 'another kind for the same key is another effect');
    await assert.rejects(
      env.db.transaction(async (tx) => {
        await effects.schedule(tx, { ...input, key: 'order-2' });
        throw new Error('handler failed');
      }),
    );
    const rows = await effects.list(env.db, {});
    assert.deepEqual(
      rows.map((row) => [row.key, row.kind, row.status, row.attempts]),
      [
        ['order-1', 'email:confirmation', 'pending', 0],
        ['order-1', 'sms:confirmation', 'pending', 0],
      ],
    );
    assert.deepEqual(rows[0]!.payload, email(1), 'the first payload wins');
    await assert.rejects(
      env.db.transaction((tx) => effects.schedule(tx, { key: '', kind: 'x', payload: {} })),
      { code: 'EFF_INVALID_OPTIONS' },
    );
  });

  test(`${name}: a sender performs every effect once, with its id as idempotency key`, async (t) => {
    const env = await open(t);
    if (!env) return;
    const server = await provider(t);
    const ids = await scheduleOrders(env, 12);
    const later = await env.db.transaction((tx) =>
      createEffects({ schema: env.schema }).schedule(tx, {
        key: 'order-later',
        kind: 'email:confirmation',
        payload: email('later'),
        notBefore: new Date(Date.now() + 3_600_000),
      }),
    );
    const done: string[] = [];
    const s = sender(env, { provider: emailProviderClient({ url: server.url }).send, onDone: (e) => done.push(e.id) });
    await s.start();
    try {
      await eventually(async () => (await statuses(env)).done === 12, 20_000, 'twelve effects done');
    } finally {
      await s.close();
    }
    assert.equal(server.sends, 12);
    for (const id of ids) assert.equal(server.sendsFor(id), 1);
    assert.deepEqual(done.sort(), [...ids].sort());
    const rows = await createEffects({ schema: env.schema }).list(env.db, { status: 'done' });
    assert.ok(
      rows.every((row) => /^msg_\d+$/.test(row.providerRef ?? '')),
      'the provider reference is kept',
    );
    assert.equal(server.sendsFor(later), 0, 'not before its notBefore');
    assert.deepEqual(await statuses(env), { done: 12, pending: 1 });
    assert.equal(s.stats.calls, 12);
  });

  test(`${name}: a sender killed after the provider call, before recording it: the next one sends the same key, nothing new is sent`, async (t) => {
    const env = await open(t);
    if (!env) return;
    const server = await provider(t);
    const [id] = await scheduleOrders(env, 1);
    const client = emailProviderClient({ url: server.url });
    let crashed = false;
    // The first sender "dies" at the named point: it never records what the provider did.
    const first = sender(env, {
      provider: client.send,
      leaseMs: 1500,
      callTimeoutMs: 1000,
      faults: async (point) => {
        if (point !== 'sender:after-call') return;
        crashed = true;
        await new Promise(() => undefined);
      },
    });
    await first.start();
    await eventually(async () => crashed, 10_000, 'the first sender to reach sender:after-call');
    await first.close({ timeoutMs: 10 });
    assert.equal(server.sends, 1);
    const seen: PendingEffect[] = [];
    const second = sender(env, {
      provider: async (effect, context) => {
        seen.push(effect);
        return client.send(effect, context);
      },
    });
    await second.start();
    try {
      await eventually(async () => (await statuses(env)).done === 1, 20_000, 'the effect done after the lease');
    } finally {
      await second.close();
    }
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.inDoubt, true, 'the lease ran out without an outcome: in doubt');
    assert.equal(seen[0]!.attempts, 2);
    assert.equal(server.requests, 2, 'the provider saw the same key again');
    assert.equal(server.replays, 1);
    assert.equal(server.sends, 1, 'and sent nothing new');
    assert.equal(server.sendsFor(id!), 1);
    const [row] = await createEffects({ schema: env.schema }).list(env.db, { ids: [id!] });
    assert.equal(row!.providerRef, server.sent[0]!.id, 'the replayed answer names the first send');
  });

  test(`${name}: several senders at once claim different effects (SKIP LOCKED): each sent once, no replays`, async (t) => {
    const env = await open(t);
    if (!env) return;
    const server = await provider(t);
    await scheduleOrders(env, 30);
    const client = emailProviderClient({ url: server.url });
    const senders = [1, 2, 3].map(() => sender(env, { provider: client.send, concurrency: 2 }));
    for (const s of senders) await s.start();
    try {
      await eventually(async () => (await statuses(env)).done === 30, 30_000, 'thirty effects done');
    } finally {
      for (const s of senders) await s.close();
    }
    assert.equal(server.requests, 30);
    assert.equal(server.sends, 30);
    assert.ok(senders.filter((s) => s.stats.calls > 0).length >= 2, 'the work was shared');
  });
}

async function embedded(t: TestContext): Promise<Env> {
  return (await databases[1]![1](t))!;
}

test('pglite: the breaker opens on a failing provider, pauses the sender, half-opens and resumes', async (t) => {
  const env = await embedded(t);
  const server = await provider(t);
  const ids = await scheduleOrders(env, 10);
  server.fail({ mode: 'unavailable' });
  const client = emailProviderClient({ url: server.url });
  let callsWhileOpen = 0;
  const s: Sender = sender(env, {
    concurrency: 1,
    maxAttempts: 1000,
    breaker: { minimumCalls: 4, failureRatio: 0.5, openMs: 300 },
    provider: async (effect, context) => {
      if (s.breaker?.state === 'open') callsWhileOpen += 1;
      return client.send(effect, context);
    },
  });
  const changes: string[] = [];
  const atOpen: { requests: number; paused: boolean }[] = [];
  s.breaker!.onStateChange((change) => {
    changes.push(`${change.from}>${change.to}`);
    if (change.to === 'open') atOpen.push({ requests: server.requests, paused: s.paused });
  });
  await s.start();
  try {
    // Down: it opens, lets one probe through after openMs, which fails and opens it again.
    await eventually(async () => changes.includes('half-open>open'), 20_000, 'a failed probe');
    assert.deepEqual(changes.slice(0, 3), ['closed>open', 'open>half-open', 'half-open>open']);
    assert.deepEqual(atOpen[0], { requests: 4, paused: true }, 'tripped by the 4th failure in a row');
    assert.equal(atOpen[1]!.requests, 5, 'one probe between the two opens');
    server.heal();
    await eventually(async () => (await statuses(env)).done === 10, 20_000, 'all effects once the provider is back');
  } finally {
    await s.close();
  }
  assert.equal(changes.at(-1), 'half-open>closed');
  assert.equal(callsWhileOpen, 0, 'no call while open');
  assert.equal(s.breaker!.state, 'closed');
  assert.equal(server.sends, 10);
  for (const id of ids) assert.equal(server.sendsFor(id), 1);
});

test('pglite: under a backlog the sender holds the rate limit (virtual time: injected clock and sleep)', async (t) => {
  const env = await embedded(t);
  await scheduleOrders(env, 50);
  let time = 1_000_000;
  const calls: number[] = [];
  const perform: EffectProvider = async (effect) => {
    calls.push(time);
    return { reference: `ref-${effect.id}` };
  };
  const s = sender(env, {
    provider: perform,
    concurrency: 8,
    breaker: false,
    rateLimit: { perSecond: 10 },
    now: () => time,
    sleep: async (ms) => {
      time += ms;
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  });
  await s.start();
  try {
    await eventually(async () => (await statuses(env)).done === 50, 30_000, 'the backlog sent');
  } finally {
    await s.close();
  }
  assert.equal(calls.length, 50);
  assert.ok(maxPerWindow(calls, 1000) <= 11, `at most 10/s (+1 burst) in any second: ${maxPerWindow(calls, 1000)}`);
  assert.ok(calls.at(-1)! - calls[0]! >= 4900, `50 calls at 10/s take 4.9 s: ${calls.at(-1)! - calls[0]!} ms`);
  assert.equal(s.limiter?.perSecond, 10);
});

/**
 * A child process that runs one sender and SIGKILLs itself at `sender:after-call`: a real crash, nothing recorded. The
 * call may take 4 s (a loaded machine): a call cut by its timeout left the provider with no send counted.
 */
function senderThatDiesAfterTheCall(schema: string, url: string): Promise<NodeJS.Signals | null> {
  const module = (path: string) => JSON.stringify(new URL(path, import.meta.url).href);
  const code = `
    import { pgDb } from ${module('../../src/db/pg.ts')};
    import { createSender } from ${module('../../src/effects/sender.ts')};
    import { emailProviderClient } from ${module('../../examples/email-provider/client.ts')};
    const sender = createSender({
      db: pgDb(), schema: ${JSON.stringify(schema)}, provider: emailProviderClient({ url: ${JSON.stringify(url)} }).send,
      leaseMs: 4500, callTimeoutMs: 4000, pollIntervalMs: 20,
      faults: (point) => { if (point === 'sender:after-call') process.kill(process.pid, 'SIGKILL'); },
    });
    await sender.start();`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: 'inherit' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      resolve(signal);
    });
  });
}

test('postgres: a sender process SIGKILLed after the provider call: another sender re-sends the same key, one e-mail', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const env = await freshSchema(t);
  const server = await provider(t);
  const [id] = await scheduleOrders(env, 1);
  assert.equal(await senderThatDiesAfterTheCall(env.schema, server.url), 'SIGKILL');
  assert.equal(server.sends, 1, 'the provider sent before the kill');
  const [before] = await createEffects({ schema: env.schema }).list(env.db, { ids: [id!] });
  assert.deepEqual([before!.status, before!.attempts], ['pending', 1], 'nothing recorded');
  const s = sender(env, { provider: emailProviderClient({ url: server.url }).send });
  await s.start();
  try {
    await eventually(async () => (await statuses(env)).done === 1, 20_000, 'the effect done after the lease');
  } finally {
    await s.close();
  }
  assert.deepEqual([server.requests, server.replays, server.sends, server.sendsFor(id!)], [2, 1, 1, 1]);
});
