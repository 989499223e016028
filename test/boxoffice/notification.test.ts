// The notification service on the real PostgreSQL (the embedded log in a fresh schema) and the reference e-mail
// provider over HTTP: one e-mail per (order, kind) under a duplicate delivery and a sender that dies after the
// provider's call, before recording it. Naive twin: the same without the idempotency key and the lookup sends twice.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type NotificationOptions, startNotification } from '../../examples/boxoffice/notification/index.ts';
import { startEmailProvider } from '../../examples/email-provider/server.ts';
import { recordRequests } from '../../scenarios/retry-storm/request-log.ts';
import { maxPerWindow } from '../../src/backpressure/rate-window.ts';
import { createEffects } from '../../src/index.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { anOrder, boxofficeEnv, naivePort, type On } from './order-events.ts';

async function notifications(
  t: TestContext,
  port?: (url: string) => NonNullable<NotificationOptions['port']>,
  on: On = 'embedded',
) {
  const { db, schema, deps, publish } = await boxofficeEnv(t, on);
  const provider = await startEmailProvider();
  t.after(() => provider.close());
  let crashes = 0;
  const sender = {
    leaseMs: 1000,
    callTimeoutMs: 500,
    pollIntervalMs: 20,
    retry: { baseMs: 50, capMs: 200 },
    // The sender dies once after the provider's answer, before recording it: the effect comes back after its lease.
    faults: () => {
      if (crashes++ === 0) throw new Error('sender crashed after the call');
    },
  };
  const options = { emailUrl: provider.url, sender, ...(port ? { port: port(provider.url) } : {}) };
  const service = await startNotification(deps, options);
  t.after(() => service.close());
  const effects = createEffects({ schema });
  const done = (n: number) => eventually(async () => (await effects.count(db, 'done')) === n, 15_000, `${n} e-mails`);
  return { provider, publish, done };
}

for (const on of ['embedded', 'kafka'] as const) {
  test(`${on}: one e-mail per (order, kind) under a duplicate delivery and a sender crash`, async (t) => {
    if (on === 'kafka' && !(await needs(t, 'kafka'))) return;
    const { provider, publish, done } = await notifications(t, undefined, on);
    const ana = anOrder();
    await publish(ana.confirmed, ana.confirmed, ana.cancelled, ana.cancelled);
    await done(2);
    assert.deepEqual(
      provider.sent.map((email) => [email.to, email.subject]),
      [
        ['ana@example.test', 'Your tickets'],
        ['ana@example.test', 'Your order is cancelled'],
      ],
    );
    assert.equal(provider.requests, 2, 'the crashed call was settled by the lookup, not sent again');
  });
}

test('a cancel that comes before its confirmation waits for it: both e-mails, once each', async (t) => {
  const { provider, publish, done } = await notifications(t);
  const ana = anOrder();
  await publish(ana.cancelled, ana.confirmed);
  await done(2);
  assert.deepEqual(provider.sent.map((email) => email.subject).sort(), ['Your order is cancelled', 'Your tickets']);
});

test('naive twin: without the idempotency key and the lookup, the crashed call is sent again', async (t) => {
  const { provider, publish, done } = await notifications(t, (url) => naivePort(() => `${url}/emails`));
  const ana = anOrder();
  await publish(ana.confirmed, ana.confirmed);
  await done(1);
  assert.equal(provider.sends, 2, 'Ana got two confirmation e-mails');
});

/** Ten orders while the provider answers 503 to its first six calls; the e-mails at `ratePerSecond`. */
async function outage(t: TestContext, ratePerSecond: number) {
  const { db, schema, deps, publish } = await boxofficeEnv(t);
  const provider = await startEmailProvider();
  t.after(() => provider.close());
  const requests = recordRequests(provider.url);
  t.after(() => requests.stop());
  provider.fail({ mode: 'unavailable', times: 6 });
  const breaker = { failureRatio: 0.5, minimumCalls: 4, openMs: 300 };
  const sender = { pollIntervalMs: 20, retry: { baseMs: 50, capMs: 200 }, maxAttempts: 20 };
  const service = await startNotification(deps, { emailUrl: provider.url, ratePerSecond, breaker, sender });
  t.after(() => service.close());
  await publish(...Array.from({ length: 10 }, () => anOrder().confirmed));
  const effects = createEffects({ schema });
  await eventually(async () => (await effects.count(db, 'done')) === 10, 15_000, 'ten e-mails');
  return { provider, metrics: await service.metrics(), perSecond: maxPerWindow(requests.times, 1000) };
}

test('behind the rate limiter and the circuit breaker: the breaker opens on 503s, every e-mail goes once, at the rate', async (t) => {
  const run = await outage(t, 5);
  assert.equal(run.provider.sends, 10);
  assert.ok(run.metrics.breaker_opened_total >= 1, 'the breaker opened');
  assert.ok(run.perSecond <= 6, `at most 5/s (+1 burst) in any second: ${run.perSecond}`);
});

test('naive twin: without a real rate limit the provider gets more calls in a second than it allows', async (t) => {
  const run = await outage(t, 1000);
  assert.equal(run.provider.sends, 10);
  assert.ok(run.perSecond > 6, `more than 5/s (+1 burst) in some second: ${run.perSecond}`);
});
