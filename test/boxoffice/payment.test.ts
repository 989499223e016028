// The payment service on the real PostgreSQL (the embedded log in a fresh schema) and the reference payment provider
// over HTTP: one charge when the provider charges and never answers (settled by a lookup), a refund after a cancel,
// and a cancel that comes before its confirm applied only after it. Each with a naive twin that fails.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { balance, type PaymentOptions, startPayment } from '../../examples/boxoffice/payment/index.ts';
import { startPaymentProvider } from '../../examples/payment-provider/server.ts';
import { createEffects } from '../../src/index.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { anOrder, boxofficeEnv, naivePort, type On } from './order-events.ts';

const fastSender = { callTimeoutMs: 400, leaseMs: 5000, pollIntervalMs: 20, retry: { baseMs: 50, capMs: 200 } };

async function boxoffice(t: TestContext, options: Partial<PaymentOptions> = {}, on: On = 'embedded') {
  if (on === 'kafka' && !(await needs(t, 'kafka'))) return undefined;
  const { db, schema, deps, publish } = await boxofficeEnv(t, on);
  const provider = await startPaymentProvider();
  t.after(() => provider.close());
  const payment = await startPayment(deps, { providerUrl: provider.url, sender: fastSender, ...options });
  t.after(() => payment.close());
  const { orderId, confirmed, cancelled } = anOrder();
  const effects = createEffects({ schema });
  return {
    provider,
    orderId,
    confirmed,
    cancelled,
    publish,
    /** Waits until this many effects are settled (done or dead). */
    settled: (n: number) =>
      eventually(
        async () => (await effects.count(db, 'done')) + (await effects.count(db, 'dead')) === n,
        15_000,
        `${n} payment effects settled`,
      ),
    dead: () => effects.count(db, 'dead'),
    /** The order events payment applied, and those it dead-lettered. */
    handled: async () => {
      const count = async (sql: string) => Number((await db.query<{ n: number }>(sql)).rows[0]!.n);
      const applied = await count(`SELECT count(*)::int AS n FROM ${schema}.processed_events`);
      return { applied, letters: await count(`SELECT count(*)::int AS n FROM ${schema}.dead_letters`) };
    },
    balance: () => balance(db, schema, orderId),
    entries: async () =>
      (await db.query<{ entry: string }>(`SELECT entry FROM ${schema}.payment_ledger ORDER BY seq`)).rows.map(
        (row) => row.entry,
      ),
  };
}

test('the provider charges and never answers: the sender settles it by a lookup; one charge', async (t) => {
  const box = (await boxoffice(t))!;
  box.provider.fail({ mode: 'timeout', times: 1 });
  await box.publish(box.confirmed, box.confirmed); // and a duplicate delivery
  await box.settled(1);
  assert.equal(box.provider.chargesFor(box.orderId), 1);
  assert.equal(box.provider.requests, 1, 'no second POST: the lookup found the charge');
  assert.equal(await box.balance(), 9000);
  assert.equal(await box.dead(), 0);
});

test('naive twin: retried without the lookup or the idempotency key, the order is charged twice', async (t) => {
  let url = '';
  const box = (await boxoffice(t, { port: naivePort(() => `${url}/charges`) }))!;
  url = box.provider.url;
  box.provider.fail({ mode: 'timeout', times: 1 });
  await box.publish(box.confirmed);
  await box.settled(1);
  assert.equal(box.provider.chargesFor(box.orderId), 2, "two charges in the provider's own log");
});

test('a cancelled order is refunded after its charge, once (a duplicate cancel changes nothing)', async (t) => {
  const box = (await boxoffice(t))!;
  box.provider.fail({ mode: 'unavailable', times: 2 });
  await box.publish(box.confirmed, box.cancelled, box.cancelled);
  await box.settled(2);
  assert.equal(box.provider.chargesFor(box.orderId), 1);
  assert.equal(box.provider.refundsFor(box.orderId), 1);
  assert.deepEqual(await box.entries(), ['charge', 'refund']);
  assert.equal(await box.balance(), 0);
});

for (const on of ['embedded', 'kafka'] as const) {
  test(`${on}: a cancel that comes before its confirm waits for it: charged, then refunded`, async (t) => {
    const box = await boxoffice(t, {}, on);
    if (!box) return;
    await box.publish(box.cancelled, box.confirmed);
    await box.settled(2);
    assert.deepEqual(await box.entries(), ['charge', 'refund'], 'the cancel applied after the confirm');
    assert.equal(box.provider.chargesFor(box.orderId), 1);
    assert.equal(box.provider.refundsFor(box.orderId), 1);
    assert.equal(await box.balance(), 0);
  });
}

test('naive twin: a cancel applied before its confirm; the customer is charged and never refunded', async (t) => {
  const box = (await boxoffice(t, { waitForConfirm: false }))!;
  await box.publish(box.cancelled, box.confirmed);
  await box.settled(2);
  assert.deepEqual(await box.entries(), ['refund', 'charge'], 'the cancel applied first');
  assert.equal(box.provider.chargesFor(box.orderId), 1);
  assert.equal(box.provider.refundsFor(box.orderId), 0, 'the refund had no charge to name: refused');
  assert.equal(await box.dead(), 1);
});

test('a free order (0 cents, which the order API accepts) is confirmed and cancelled with no charge and no dead letter', async (t) => {
  const box = (await boxoffice(t))!;
  const free = <E extends { data: { amountCents: number } }>(event: E): E => ({
    ...event,
    data: { ...event.data, amountCents: 0 },
  });
  await box.publish(free(box.confirmed), free(box.cancelled));
  // before: both were dead letters (PermanentError: amountCents must be positive), one alert per free ticket
  await eventually(
    async () => {
      const { applied, letters } = await box.handled();
      return applied + letters === 2;
    },
    15_000,
    'both events handled',
  );
  assert.deepEqual(await box.handled(), { applied: 2, letters: 0 });
  assert.equal(box.provider.chargesFor(box.orderId), 0, 'nothing to charge');
  assert.equal(box.provider.refundsFor(box.orderId), 0, 'nothing to refund');
  assert.equal(await box.balance(), 0);
});
