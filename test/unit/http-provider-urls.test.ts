// Issue 11 item 7 (URLs): a provider URL with credentials is sent as Basic auth (fetch refuses such a URL, and its
// TypeError quoted the URL, token included, into `effects.last_error` and the logs); a URL with a query string keeps
// it on the call and builds the lookup as `<path>/by-key/<id>?<query>` (it was `…?key=K/by-key/<id>`, the collection
// endpoint, whose 200 settled in-doubt effects as done without sending).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { httpProvider } from '../../src/effects/http-provider.ts';
import type { PendingEffect } from '../../src/effects/provider.ts';
import { pendingEffect } from '../support/effects.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

async function target(t: TestContext, answer: (seen: Seen) => number = () => 200) {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers };
    seen.push(entry);
    request.resume();
    request.on('end', () => {
      const status = answer(entry);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 200 ? JSON.stringify({ id: 'ref-1' }) : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, seen };
}

const context = (e: PendingEffect) => ({ idempotencyKey: e.id, signal: new AbortController().signal });

test('http provider URLs: credentials in the URL are sent as Basic auth, not refused by fetch', async (t) => {
  const { port, seen } = await target(t);
  const http = httpProvider({ url: `http://ops:s3cret-T0KEN@127.0.0.1:${port}/hooks` });
  const e = pendingEffect({ n: 1 });
  assert.deepEqual(await http(e, context(e)), { reference: 'ref-1' });
  assert.equal(seen[0]?.url, '/hooks');
  assert.equal(seen[0]?.headers.authorization, `Basic ${Buffer.from('ops:s3cret-T0KEN').toString('base64')}`);
});

test('http provider URLs: a failure never quotes the credentials', async (t) => {
  const { port } = await target(t);
  const http = httpProvider({ url: `http://ops:s3cret-T0KEN@127.0.0.1:${port}/hooks` });
  const e = pendingEffect({ n: 1 });
  // a refused connection (nothing listens on port 9) and a 500: neither message may hold the token
  const down = httpProvider({ url: 'http://ops:s3cret-T0KEN@127.0.0.1:9/hooks' });
  const failures = [await down(e, context(e)).catch((error: Error) => error)];
  const failing = await target(t, () => 500);
  const refusing = httpProvider({ url: `http://ops:s3cret-T0KEN@127.0.0.1:${failing.port}/hooks` });
  failures.push(await refusing(e, context(e)).catch((error: Error) => error));
  for (const failure of failures) {
    assert.ok(failure instanceof Error, 'it failed');
    assert.doesNotMatch(`${failure.message} ${String(failure.cause)}`, /s3cret-T0KEN/);
  }
  assert.ok(await http(e, context(e)), 'the naive twin: the same provider with a live target sends');
});

test('http provider URLs: a query string stays on the call and the lookup is <path>/by-key/<id>?<query>', async (t) => {
  const { port, seen } = await target(t, (entry) => (entry.url.includes('/by-key/') ? 404 : 200));
  const http = httpProvider({ url: `http://127.0.0.1:${port}/api/emails/?key=K&region=eu` });
  const e = pendingEffect({ n: 1 }, 'id/with space');
  await http(e, context(e));
  assert.equal(await http.lookup(e, context(e)), undefined, 'the lookup asked the by-key endpoint: 404');
  assert.deepEqual(
    seen.map((s) => `${s.method} ${s.url}`),
    ['POST /api/emails?key=K&region=eu', 'GET /api/emails/by-key/id%2Fwith%20space?key=K&region=eu'],
  );
});
