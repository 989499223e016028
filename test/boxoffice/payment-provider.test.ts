// The reference payment provider on its own (HTTP): idempotency keys, refunds that follow their charge, lookups by
// key in two namespaces, its log, and the injectable faults (503, charge-then-no-answer, slow).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type PaymentProvider, startPaymentProvider } from '../../examples/payment-provider/server.ts';

async function provider(t: TestContext): Promise<PaymentProvider> {
  const server = await startPaymentProvider();
  t.after(() => server.close());
  return server;
}

function post(server: PaymentProvider, path: string, body: unknown, key?: string, signal?: AbortSignal) {
  const headers = key === undefined ? {} : { 'idempotency-key': key };
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

const charge = { orderId: 'o-1', amountCents: 9000 };

test('a repeated Idempotency-Key gets the first answer and never charges twice; a refund follows its charge', async (t) => {
  const server = await provider(t);
  const first = await post(server, '/charges', charge, 'c-1');
  const again = await post(server, '/charges', charge, 'c-1');
  assert.deepEqual([first.status, again.status, again.headers.get('idempotent-replayed')], [201, 201, 'true']);
  assert.deepEqual(await again.json(), await first.json());
  assert.equal((await post(server, '/charges', { ...charge, amountCents: 1 }, 'c-1')).status, 422, 'another body');
  assert.equal((await post(server, '/charges', { orderId: 'o-1' }, 'c-2')).status, 422, 'no amount');
  const refund = { orderId: 'o-1', chargeKey: 'c-1', amountCents: 9000 };
  assert.equal((await post(server, '/refunds', { ...refund, chargeKey: 'c-9' }, 'r-0')).status, 409, 'not charged yet');
  assert.equal((await post(server, '/refunds', { ...refund, amountCents: 9001 }, 'r-1')).status, 422, 'too much');
  assert.equal((await post(server, '/refunds', refund, 'r-1')).status, 201, 'the refusal was not stored');
  assert.equal((await post(server, '/refunds', refund, 'r-1')).status, 201, 'a replay');
  assert.equal((await post(server, '/refunds', refund, 'r-2')).status, 422, 'already refunded in full');
  assert.deepEqual([server.chargesFor('o-1'), server.refundsFor('o-1'), server.replays], [1, 1, 2]);
  assert.equal((await fetch(`${server.url}/charges/by-key/c-1`)).status, 201, 'the stored answer');
  assert.equal((await fetch(`${server.url}/refunds/by-key/c-1`)).status, 404, 'a charge key is no refund');
  assert.equal((await fetch(`${server.url}/refunds/by-key/r-1`)).status, 201);
  const log = (await (await fetch(`${server.url}/admin/log`)).json()) as { charges: unknown[]; refunds: unknown[] };
  assert.deepEqual([log.charges.length, log.refunds.length], [1, 1]);
});

test('faults: 503 with Retry-After, a charge whose answer never comes (found by lookup), a slow answer', async (t) => {
  const server = await provider(t);
  server.fail({ mode: 'unavailable', retryAfterSeconds: 2, times: 1 });
  const down = await post(server, '/charges', charge, 'a');
  assert.deepEqual([down.status, down.headers.get('retry-after'), server.charges.length], [503, '2', 0]);

  server.fail({ mode: 'timeout', times: 1 });
  await assert.rejects(post(server, '/charges', charge, 'b', AbortSignal.timeout(300)), /aborted/);
  assert.equal(server.chargesFor('o-1'), 1, 'charged, though no answer came');
  assert.equal((await fetch(`${server.url}/charges/by-key/b`)).status, 201, 'the lookup finds it');

  server.fail({ mode: 'timeout', actFirst: false, times: 1 });
  await assert.rejects(post(server, '/charges', charge, 'c', AbortSignal.timeout(300)), /aborted/);
  assert.equal((await fetch(`${server.url}/charges/by-key/c`)).status, 404, 'never charged: nothing to find');

  server.fail({ mode: 'slow', delayMs: 400, times: 1 });
  const started = Date.now();
  const slow = post(server, '/charges', charge, 'd');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal((await post(server, '/charges', charge, 'd')).status, 409, 'the same key while the first runs');
  assert.equal((await slow).status, 201);
  assert.ok(Date.now() - started >= 400);
  assert.deepEqual([server.chargesFor('o-1'), server.requests], [2, 5]);
});
