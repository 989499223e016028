// The alerting service on the real PostgreSQL: a dead effect (a charge the sender gave up on) and a dead letter (a
// poison order event) each raise an alert within 10 s, as an error log line and a webhook POST naming what died.
// Naive twin: the library's dead-letter watcher alone never says a word about the dead effect.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { startAlerting } from '../../examples/boxoffice/alerting/index.ts';
import { startPayment } from '../../examples/boxoffice/payment/index.ts';
import type { BoxofficeDeps, RunningService } from '../../examples/boxoffice/shared/deps.ts';
import type { OrderEvent } from '../../examples/boxoffice/shared/events.ts';
import { startPaymentProvider } from '../../examples/payment-provider/server.ts';
import {
  createDeadLetterAlerts,
  createEffects,
  createEvent,
  type DeadLetterAlert,
  type Event,
  type Logger,
  silentLogger,
} from '../../src/index.ts';
import { eventually } from '../support/fixtures.ts';
import { anOrder, boxofficeEnv } from './order-events.ts';

async function webhook(t: TestContext) {
  const received: DeadLetterAlert[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push(JSON.parse(body) as DeadLetterAlert);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`, received };
}

type Wiring = (deps: BoxofficeDeps, webhookUrl: string) => Promise<RunningService>;

/** A charge that goes dead (the provider is down, two attempts), then a poison order that becomes a dead letter. */
async function deaths(t: TestContext, wire: Wiring) {
  const { db, schema, deps, publish } = await boxofficeEnv(t);
  const hook = await webhook(t);
  const lines: string[] = [];
  const logger: Logger = { ...silentLogger, error: (message) => lines.push(message) };
  const alerting = await wire({ ...deps, logger }, hook.url);
  t.after(() => alerting.close());
  const provider = await startPaymentProvider();
  t.after(() => provider.close());
  provider.fail({ mode: 'unavailable' });
  const sender = { maxAttempts: 2, retry: { baseMs: 20, capMs: 50 }, pollIntervalMs: 20 };
  const payment = await startPayment(deps, { providerUrl: provider.url, sender });
  t.after(() => payment.close());
  const alerted = (subject: string) =>
    eventually(async () => hook.received.some((a) => a.subject === subject), 10_000, `an alert: ${subject}`);
  const effects = createEffects({ schema });
  const { topic, type, source, key } = anOrder().confirmed;
  const poison = createEvent({ topic, type, source, key, data: { orderId: 'not-a-uuid' } });
  return {
    hook,
    lines,
    alerted,
    deadEffect: async () => {
      await publish(anOrder().confirmed);
      await eventually(async () => (await effects.count(db, 'dead')) === 1, 10_000, 'the charge dead');
    },
    deadLetter: () => publish(poison as unknown as Event<OrderEvent>),
  };
}

test('a dead effect and a dead letter each raise an alert within 10 s: a log line and a webhook', async (t) => {
  const run = await deaths(t, (deps, webhookUrl) => startAlerting(deps, { webhookUrl }));
  await run.deadEffect();
  await run.alerted('dead effects');
  await run.deadLetter();
  await run.alerted('dead letters');
  assert.deepEqual(
    run.hook.received.map((alert) => [alert.subject, alert.kind, alert.dead]),
    [
      ['dead effects', 'non-empty', 1],
      ['dead letters', 'non-empty', 1],
    ],
  );
  assert.deepEqual(
    run.lines.filter((line) => line.endsWith('appeared')),
    ['dead effects appeared', 'dead letters appeared'],
  );
});

test('naive twin: the dead-letter watcher alone raises nothing for the dead effect', async (t) => {
  const run = await deaths(t, async (deps, webhookUrl) => {
    const watcher = createDeadLetterAlerts({ db: deps.db, schema: deps.schema, webhookUrl, logger: deps.logger! });
    await watcher.start();
    return { name: 'alerting', close: () => watcher.close() };
  });
  await run.deadEffect();
  await run.deadLetter();
  await run.alerted('dead letters'); // a check made after the charge was dead
  assert.deepEqual(
    run.hook.received.map((alert) => alert.subject),
    ['dead letters'],
    'no alert for the dead charge',
  );
});
