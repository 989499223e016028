// httpProvider against the reference e-mail provider: the request it sends, and each answer read as the sender's
// failure kinds (done, transient with Retry-After, permanent, timeout), plus the lookup by key.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { type EmailProvider, startEmailProvider } from '../../examples/email-provider/server.ts';
import { httpProvider } from '../../src/effects/http-provider.ts';
import type { PendingEffect, ProviderError } from '../../src/effects/provider.ts';
import { pendingEffect } from '../support/effects.ts';

async function provider(t: TestContext): Promise<EmailProvider> {
  const server = await startEmailProvider();
  t.after(() => server.close());
  return server;
}

const message = { to: 'ana@example.com', subject: 'Order 1 confirmed', text: 'Thanks' };

const effect = pendingEffect;

const context = (e: PendingEffect) => ({ idempotencyKey: e.id, signal: new AbortController().signal });

/** The e-mail provider takes the payload alone as its body. */
const emails = (server: EmailProvider, timeoutMs?: number) =>
  httpProvider({
    url: `${server.url}/emails`,
    body: (e) => e.payload,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });

test('2xx: done, with the answer id as reference, the effect id as Idempotency-Key; the lookup finds it', async (t) => {
  const server = await provider(t);
  const http = emails(server);
  const e = effect(message);
  const result = await http(e, context(e));
  assert.match(result?.reference ?? '', /^msg_/);
  assert.deepEqual(await http(e, context(e)), result, 'the same key again: the stored answer');
  assert.equal(server.sendsFor(e.id), 1);
  assert.deepEqual([server.sends, server.replays], [1, 1]);
  assert.deepEqual(await http.lookup(e, context(e)), result);
  const unknown = effect(message);
  assert.equal(await http.lookup(unknown, context(unknown)), undefined, '404: never seen');
});

test('503 → transient; 429 with Retry-After → transient with retryAfterMs; 422 → permanent', async (t) => {
  const server = await provider(t);
  const http = emails(server);
  const call = (payload: unknown) => {
    const e = effect(payload);
    return http(e, context(e));
  };
  server.fail({ mode: 'unavailable', times: 1 });
  await assert.rejects(call(message), (error: ProviderError) => {
    assert.deepEqual(
      [error.code, error.failure, error.retryAfterMs],
      ['EFF_PROVIDER_TRANSIENT', 'transient', undefined],
    );
    assert.deepEqual(error.details, { status: 503 });
    return true;
  });
  server.fail({ mode: 'rate-limited', retryAfterSeconds: 3, times: 1 });
  await assert.rejects(call(message), { code: 'EFF_PROVIDER_TRANSIENT', failure: 'transient', retryAfterMs: 3000 });
  await assert.rejects(call({ to: 'nobody', subject: 's' }), { code: 'EFF_PROVIDER_PERMANENT', failure: 'permanent' });
  assert.equal(server.sends, 0);
  const closed = await startEmailProvider(); // nothing was ever sent to it: no pooled socket, a real refusal
  await closed.close();
  const e = effect(message);
  await assert.rejects(httpProvider({ url: `${closed.url}/emails` })(e, context(e)), (error: ProviderError) => {
    assert.deepEqual([error.failure, error.details], ['transient', { code: 'ECONNREFUSED' }]);
    return true;
  });
});

test('no answer within timeoutMs → timeout (outcome unknown); the caller abort passes through', async (t) => {
  const server = await provider(t);
  server.fail({ mode: 'timeout' });
  const e = effect(message);
  const started = Date.now();
  await assert.rejects(emails(server, 200)(e, context(e)), { code: 'EFF_PROVIDER_TIMEOUT', failure: 'timeout' });
  assert.ok(Date.now() - started < 5000);
  assert.equal(server.sendsFor(e.id), 1, 'it did send: the outcome was unknown to the caller');
  const abort = new AbortController();
  const pending = emails(server, 60_000)(effect(message), { idempotencyKey: 'k', signal: abort.signal });
  abort.abort(new Error('sender timed out'));
  await assert.rejects(pending, /sender timed out/);
});

test('default body { id, key, kind, payload }, extra headers, 2xx without JSON; bad options refused', async (t) => {
  const seen: { headers: Record<string, unknown>; body: string }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      seen.push({ headers: request.headers, body });
      response.writeHead(request.url === '/hooks/reference' ? 200 : 204, { 'retry-after': '1' });
      response.end(request.url === '/hooks/reference' ? '{"reference":"r-1"}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const e = effect({ n: 1 }, 'id-1');
  const http = httpProvider({ url: `${url}/hooks/`, headers: { authorization: 'Bearer t' } });
  assert.deepEqual(await http(e, context(e)), {});
  assert.deepEqual(JSON.parse(seen[0]!.body), { id: 'id-1', key: 'order-1', kind: 'email', payload: { n: 1 } });
  assert.deepEqual(
    [seen[0]!.headers['idempotency-key'], seen[0]!.headers.authorization, seen[0]!.headers['content-type']],
    ['id-1', 'Bearer t', 'application/json'],
  );
  assert.deepEqual(await httpProvider({ url: `${url}/hooks/reference` })(e, context(e)), { reference: 'r-1' });
  assert.throws(() => httpProvider({ url: 'not a url' }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => httpProvider({ url, timeoutMs: 0 }), { code: 'EFF_INVALID_OPTIONS' });
});

test('a redirect is refused (permanent), never followed as a body-less GET that would read as sent', async (t) => {
  const methods: string[] = [];
  const server = createServer((request, response) => {
    methods.push(`${request.method} ${request.url}`);
    if (request.url === '/moved') response.writeHead(200).end('{}');
    else response.writeHead(302, { location: '/moved' }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`;
  const e = effect({ n: 1 }, 'id-2');
  await assert.rejects(httpProvider({ url })(e, context(e)), (error: ProviderError) => error.failure === 'permanent');
  assert.deepEqual(methods, ['POST /emails'], 'the redirect was not followed');
});
