// Work the provider did must not be recorded as "not in doubt". A target that performs the effect and then answers a
// gateway's 502, or whose connection is cut after it read the request, leaves the effect in doubt, dead or not, and
// `effects.cancel()` says so. Only a refused connection proves nothing was sent. Real PostgreSQL, a real HTTP server.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { httpProvider } from '../../src/effects/http-provider.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { type EffectProvider, ProviderError } from '../../src/effects/provider.ts';
import { createSender } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

type Mode = 'bad-gateway' | 'gateway-timeout' | 'cut';

/** A target that performs every effect it reads, then answers as `mode` says. */
async function target(t: import('node:test').TestContext, mode: Mode) {
  const performed: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      performed.push(String(request.headers['idempotency-key']));
      if (mode === 'cut') request.socket.destroy();
      else response.writeHead(mode === 'bad-gateway' ? 502 : 504).end(body.length > 0 ? 'upstream' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/effects`, performed };
}

/** One effect, one attempt through `provider`; what the ledger and cancel() say of it once it is dead. */
async function deadEffect(t: import('node:test').TestContext, provider: (url: string) => EffectProvider, url: string) {
  const { db, schema } = await freshSchema(t);
  const effects = createEffects({ schema });
  const id = await db.transaction((tx) => effects.schedule(tx, { key: 'k', kind: 'email', payload: { to: 'a' } }));
  const sender = createSender({
    db,
    schema,
    provider: provider(url),
    maxAttempts: 1,
    pollIntervalMs: 20,
    logger: silentLogger,
  });
  t.after(() => sender.close());
  await sender.start();
  const listed = async () => (await effects.list(db, { ids: [id] }))[0];
  await eventually(async () => (await listed())?.status === 'dead', 10_000, 'the effect dead');
  const inDoubt = (await listed())?.inDoubt;
  const cancelled = await effects.cancel(db, [id]);
  return { id, inDoubt, cancelled };
}

for (const mode of ['bad-gateway', 'gateway-timeout', 'cut'] as const) {
  test(`${mode}: the target did the work; the dead effect is in doubt and cancel() says so`, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { url, performed } = await target(t, mode);
    const { id, inDoubt, cancelled } = await deadEffect(t, (to) => httpProvider({ url: to }), url);
    assert.deepEqual(performed, [id], 'the target performed it');
    assert.equal(inDoubt, true);
    assert.deepEqual(cancelled.inDoubt, [id]);
  });
}

test('a refused connection: nothing was sent, the dead effect is not in doubt', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  // A port that was just free: nothing listens on it.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const closed = `http://127.0.0.1:${port}/effects`;
  const { inDoubt, cancelled } = await deadEffect(t, (to) => httpProvider({ url: to }), closed);
  assert.equal(inDoubt, false);
  assert.deepEqual(cancelled.inDoubt, []);
});

test('naive twin: a provider whose 502 is plain transient (the old reading) leaves done work "not in doubt"', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { url, performed } = await target(t, 'bad-gateway');
  const plain = (to: string): EffectProvider => {
    const http = httpProvider({ url: to });
    return async (effect, context) => {
      try {
        return await http(effect, context);
      } catch (error) {
        throw error instanceof ProviderError ? new ProviderError(error.failure, error.message) : error;
      }
    };
  };
  const { id, inDoubt, cancelled } = await deadEffect(t, plain, url);
  assert.deepEqual(performed, [id]);
  assert.equal(inDoubt, false, 'done work recorded as not in doubt');
  assert.deepEqual(cancelled.inDoubt, []);
});
