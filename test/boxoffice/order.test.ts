// The order service's API on the real PostgreSQL: a request retried with the same Idempotency-Key makes one order,
// and bad requests get a 4xx with a reason. Naive twin: without the key row, the retry makes a second order.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { startOrder } from '../../examples/boxoffice/order/index.ts';
import { postgresTransport } from '../../src/index.ts';
import { freshSchema } from '../support/fixtures.ts';

const order = { showId: 'show-1', seats: 2, customer: { name: 'Ana', email: 'ana@example.test' }, amountCents: 9000 };

async function service(t: TestContext, idempotencyKeys: boolean) {
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  const orders = await startOrder({ db, transport, schema, groupPrefix: `${schema}-` }, { idempotencyKeys });
  t.after(() => orders.close());
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${orders.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const count = async () => Number((await db.query(`SELECT count(*) AS n FROM ${schema}.orders`)).rows[0]!.n);
  return { url: orders.url, post, count };
}

/** A client whose first answer was lost retries the same request, the second time while the first may still run. */
async function retriedRequest(api: Awaited<ReturnType<typeof service>>) {
  const headers = { 'idempotency-key': 'checkout-ana-1' };
  const [first, second] = await Promise.all([api.post('/orders', order, headers), api.post('/orders', order, headers)]);
  const third = await api.post('/orders', order, headers);
  return [first, second, third];
}

test('a request retried with the same Idempotency-Key makes one order', async (t) => {
  const api = await service(t, true);
  const answers = await retriedRequest(api);
  const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ orderId: string }>));
  assert.deepEqual(answers.map((r) => r.status).sort(), [200, 200, 201]);
  assert.equal(new Set(bodies.map((b) => b.orderId)).size, 1, 'every answer names the same order');
  assert.equal(await api.count(), 1);
  const changed = await api.post('/orders', { ...order, seats: 3 }, { 'idempotency-key': 'checkout-ana-1' });
  assert.equal(changed.status, 422, 'the same key with another body is refused');
  assert.equal(await api.count(), 1);
});

test('naive twin: without the key row the retried request makes a second order', async (t) => {
  const api = await service(t, false);
  await retriedRequest(api);
  assert.equal(await api.count(), 3);
});

test('bad requests get a 4xx with a reason, never a 500', async (t) => {
  const api = await service(t, true);
  const cases: [string, Promise<Response>, number][] = [
    ['not JSON', api.post('/orders', '{"showId":'), 400],
    ['an array', api.post('/orders', '[]'), 400],
    ['no customer', api.post('/orders', { ...order, customer: undefined }), 400],
    ['zero seats', api.post('/orders', { ...order, seats: 0 }), 400],
    ['seats as text', api.post('/orders', { ...order, seats: '2' }), 400],
    ['not an e-mail', api.post('/orders', { ...order, customer: { name: 'Bruno', email: 'bruno' } }), 400],
    ['an empty key', api.post('/orders', order, { 'idempotency-key': '' }), 400],
    ['not JSON content', api.post('/orders', order, { 'content-type': 'text/plain' }), 415],
    ['a huge body', api.post('/orders', { ...order, pad: 'x'.repeat(70_000) }), 413],
    ['cancel of no order', api.post('/orders/0190a2b4-0000-7000-8000-000000000000/cancel', {}), 404],
    ['get of a bad id', fetch(`${api.url}/orders/1;DROP`), 404],
    ['no route', fetch(`${api.url}/tickets`), 404],
  ];
  for (const [what, answer, status] of cases) {
    const response = await answer;
    const body = (await response.json()) as { error?: string };
    assert.equal(response.status, status, what);
    assert.ok(body.error && body.error.length > 0, `${what}: a reason`);
  }
  assert.equal(await api.count(), 0);
});

test('an order is found, cancelled once, and a second cancel changes nothing', async (t) => {
  const api = await service(t, true);
  const placed = (await (await api.post('/orders', order)).json()) as { orderId: string };
  const found = await fetch(`${api.url}/orders/${placed.orderId}`);
  assert.equal(found.status, 200);
  for (const _ of [1, 2]) {
    const cancelled = (await (await api.post(`/orders/${placed.orderId}/cancel`, {})).json()) as {
      status: string;
      version: number;
    };
    assert.deepEqual([cancelled.status, cancelled.version], ['cancelled', 2]);
  }
});
