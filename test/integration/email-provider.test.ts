// The reference e-mail provider (idempotency keys, faults on demand), its client's error mapping, and the sender's
// handling of each failure: a timeout settled by lookup or by replay, Retry-After, permanent and exhausted failures.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { emailProviderClient, retryAfterMs } from '../../examples/email-provider/client.ts';
import { type EmailProvider, startEmailProvider } from '../../examples/email-provider/server.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import type { ProviderError } from '../../src/effects/provider.ts';
import { createSender, type SenderOptions } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { pendingEffect } from '../support/effects.ts';
import { eventually } from '../support/fixtures.ts';

async function provider(t: TestContext): Promise<EmailProvider> {
  const server = await startEmailProvider();
  t.after(() => server.close());
  return server;
}

const message = { to: 'ana@example.com', subject: 'Order 1 confirmed', text: 'Thanks' };

function post(server: EmailProvider, body: unknown, key?: string) {
  return fetch(`${server.url}/emails`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: JSON.stringify(body),
  });
}

const effect = (payload: unknown, id = 'e-1') => pendingEffect(payload, id);

test('same Idempotency-Key: the same response again and no second send; another body under it is refused', async (t) => {
  const server = await provider(t);
  const first = await post(server, message, 'k-1');
  assert.equal(first.status, 201);
  const sent = (await first.json()) as { id: string };
  const again = await post(server, message, 'k-1');
  assert.equal(again.status, 201);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(await again.json(), sent);
  assert.equal((await post(server, { ...message, subject: 'other' }, 'k-1')).status, 422);
  assert.equal((await post(server, message)).status, 201, 'without a key');
  assert.equal((await post(server, message)).status, 201, 'without a key, sent again');
  assert.deepEqual([server.sends, server.replays, server.sendsFor('k-1')], [3, 1, 1]);
  const lookup = await fetch(`${server.url}/emails/by-key/k-1`);
  assert.deepEqual(await lookup.json(), sent);
  assert.equal((await fetch(`${server.url}/emails/by-key/unknown`)).status, 404);
  assert.equal((await post(server, { to: 'no-address', subject: 's' }, 'k-2')).status, 422);
});

test('the admin endpoint injects 429 with Retry-After, 503, for a number of requests, and heals', async (t) => {
  const server = await provider(t);
  const admin = (method: string, body?: unknown) =>
    fetch(`${server.url}/admin/faults`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
  assert.equal((await admin('POST', { mode: 'rate-limited', retryAfterSeconds: 7, times: 2 })).status, 204);
  const limited = await post(server, message, 'a');
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '7');
  assert.equal((await post(server, message, 'a')).status, 429);
  assert.equal((await post(server, message, 'a')).status, 201, 'after two requests');
  await admin('POST', { mode: 'unavailable' });
  assert.equal((await post(server, message, 'b')).status, 503);
  assert.equal((await post(server, message, 'a')).status, 503, 'even a replay: the whole service is down');
  assert.equal((await admin('DELETE')).status, 204);
  assert.equal((await post(server, message, 'b')).status, 201);
  const stats = (await (await fetch(`${server.url}/admin/stats`)).json()) as Record<string, unknown>;
  assert.deepEqual(stats, { sends: 2, requests: 6, replays: 0, byKey: { a: 1, b: 1 } });
});

test('the client maps answers to provider errors: 5xx/429 transient (Retry-After), 4xx permanent, abort passes', async (t) => {
  const server = await provider(t);
  const client = emailProviderClient({ url: server.url });
  const call = (payload: unknown, signal = new AbortController().signal) =>
    client.send(effect(payload), { idempotencyKey: `key-${Math.random()}`, signal });
  assert.match((await call(message))?.reference ?? '', /^msg_/);
  server.fail({ mode: 'rate-limited', retryAfterSeconds: 3, times: 1 });
  await assert.rejects(call(message), (error: ProviderError) => {
    assert.deepEqual([error.code, error.failure, error.retryAfterMs], ['EFF_PROVIDER_TRANSIENT', 'transient', 3000]);
    return true;
  });
  server.fail({ mode: 'unavailable', times: 1 });
  await assert.rejects(call(message), { code: 'EFF_PROVIDER_TRANSIENT', retryAfterMs: undefined });
  await assert.rejects(call({ to: 'nobody' }), { code: 'EFF_PROVIDER_PERMANENT', failure: 'permanent' });
  server.fail({ mode: 'timeout', times: 1 });
  const abort = new AbortController();
  const hanging = call(message, abort.signal);
  await eventually(async () => server.sends === 2, 5000, 'the send behind the timeout');
  abort.abort(new Error('timed out'));
  await assert.rejects(hanging, /timed out/);
  await server.close();
  await assert.rejects(call(message), { code: 'EFF_PROVIDER_TRANSIENT' }, 'nothing listening: transient');
  assert.equal(retryAfterMs('120'), 120_000);
  assert.equal(
    retryAfterMs('Wed, 01 Jan 2025 00:00:30 GMT', () => Date.parse('2025-01-01T00:00:00Z')),
    30_000,
  );
  assert.equal(retryAfterMs('soon'), undefined);
  assert.equal(retryAfterMs(null), undefined);
});

async function ledger(t: TestContext, payload: unknown = message) {
  const db: Db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db, { schema: 'fx' });
  const effects = createEffects({ schema: 'fx' });
  const id = await db.transaction((tx) => effects.schedule(tx, { key: 'order-1', kind: 'email', payload }));
  const row = async () => (await effects.list(db, { ids: [id] }))[0]!;
  return { db, effects, id, row };
}

function options(db: Db, rest: Partial<SenderOptions> & Pick<SenderOptions, 'provider'>): SenderOptions {
  return { db, schema: 'fx', logger: silentLogger, pollIntervalMs: 20, retry: { baseMs: 1, capMs: 10 }, ...rest };
}

for (const withLookup of [true, false]) {
  test(`a call that times out is in doubt: retried with the same key, settled ${withLookup ? 'by the lookup' : 'by the replay'}; one send`, async (t) => {
    const server = await provider(t);
    const { db, id, row } = await ledger(t);
    const client = emailProviderClient({ url: server.url });
    server.fail({ mode: 'timeout', times: 1 });
    const sender = createSender(
      options(db, { provider: client.send, callTimeoutMs: 300, ...(withLookup ? { lookup: client.lookup } : {}) }),
    );
    await sender.start();
    try {
      await eventually(async () => (await row()).status === 'done', 20_000, 'the effect done');
    } finally {
      await sender.close();
    }
    assert.equal(server.sends, 1);
    assert.equal(server.sendsFor(id), 1);
    assert.equal(sender.stats.timeouts, 1);
    assert.equal(sender.stats.settledByLookup, withLookup ? 1 : 0);
    assert.equal(server.requests, withLookup ? 1 : 2, withLookup ? 'no second POST' : 'the same key again');
    assert.equal(server.replays, withLookup ? 0 : 1);
    assert.equal((await row()).providerRef, server.sent[0]!.id);
  });
}

test('a permanent refusal makes the effect dead at once (onDead, count, last code); revive gives it another round', async (t) => {
  const server = await provider(t);
  const { db, effects, id, row } = await ledger(t, { to: 'not-an-address', subject: 'x' });
  const dead: [string, unknown][] = [];
  const sender = createSender(
    options(db, {
      provider: emailProviderClient({ url: server.url }).send,
      onDead: (effect, error) => dead.push([effect.id, error]),
    }),
  );
  await sender.start();
  try {
    await eventually(async () => (await row()).status === 'dead', 20_000, 'the effect dead');
    assert.equal(server.requests, 1);
    assert.equal(dead.length, 1);
    assert.equal(dead[0]![0], id);
    assert.equal((dead[0]![1] as ProviderError).failure, 'permanent');
    const settled = await row();
    assert.deepEqual([settled.attempts, settled.lastCode], [1, 'EFF_PROVIDER_PERMANENT']);
    assert.match(settled.lastError ?? '', /422/);
    assert.equal(await effects.count(db, 'dead'), 1);
    assert.equal(sender.stats.dead, 1);
    assert.equal(sender.breaker?.state, 'closed', 'a refusal is an answer, not an outage');
    assert.equal(await effects.revive(db, [id]), 1);
    await eventually(async () => (await row()).status === 'dead' && server.requests === 2, 20_000, 'dead again');
  } finally {
    await sender.close();
  }
  assert.equal(server.sends, 0);
});

test('transient failures are retried up to maxAttempts, then the effect is dead', async (t) => {
  const server = await provider(t);
  const { db, row } = await ledger(t);
  server.fail({ mode: 'unavailable' });
  const sender = createSender(
    options(db, { provider: emailProviderClient({ url: server.url }).send, maxAttempts: 3, breaker: false }),
  );
  await sender.start();
  try {
    await eventually(async () => (await row()).status === 'dead', 20_000, 'the effect dead');
  } finally {
    await sender.close();
  }
  const settled = await row();
  assert.deepEqual([settled.attempts, settled.lastCode, server.requests], [3, 'EFF_PROVIDER_TRANSIENT', 3]);
  assert.deepEqual([sender.stats.retried, sender.stats.dead], [2, 1]);
});

test("a 429's Retry-After holds the effect and pauses the sender until then (injected clock)", async (t) => {
  const server = await provider(t);
  const { db, row } = await ledger(t);
  server.fail({ mode: 'rate-limited', retryAfterSeconds: 30, times: 1 });
  let time = 5_000_000;
  const sender = createSender(
    options(db, { provider: emailProviderClient({ url: server.url }).send, now: () => time, breaker: false }),
  );
  await sender.start();
  try {
    await eventually(async () => sender.stats.retried === 1, 20_000, 'the 429 recorded');
    assert.equal(sender.paused, true);
    const held = await row();
    assert.ok(
      held.nextAttemptAt.getTime() - held.updatedAt.getTime() >= 30_000,
      'the next attempt is not before the Retry-After',
    );
    assert.equal(held.lastCode, 'EFF_PROVIDER_TRANSIENT');
    time += 30_000;
    assert.equal(sender.paused, false, 'the hold ends with the Retry-After');
    // Make it due now (the database's clock is real): the sender, no longer held, sends it.
    await db.query(`UPDATE fx.effects SET next_attempt_at = now()`);
    await eventually(async () => (await row()).status === 'done', 20_000, 'sent after the hold');
  } finally {
    await sender.close();
  }
  assert.equal(server.sends, 1);
});
