// The retry-storm scenario as a test: the e-mail provider answers 503 for the first seconds of traffic; every order's
// e-mail is still sent exactly once, nothing ends dead, the breaker opened, and the provider never saw more than its
// limit (+10%) in any second. The naive twin (the same sender without the rate limiter) must break the limit when the
// backlog drains after the outage. Dead effects raise the dead-letter alerting like dead letters do.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emailProviderClient } from '../../examples/email-provider/client.ts';
import { startEmailProvider } from '../../examples/email-provider/server.ts';
import { type RetryStormResult, runRetryStorm } from '../../scenarios/retry-storm/run.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { createDeadLetterAlerts, type DeadLetterAlert } from '../../src/deadletter/alerts.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { createSender } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const quiet = () => undefined;
const small = { orders: 300, ratePerSecond: 50, outageMs: 3000, partitions: 4, log: quiet };

async function embedded(naive?: 'no-limiter'): Promise<RetryStormResult> {
  const db = await pgliteDb();
  try {
    const transport = postgresTransport({ db, schema: 'storm', pollIntervalMs: 20 });
    return await runRetryStorm({ db, transport, schema: 'storm', topic: 'orders', naive, ...small });
  } finally {
    await db.close();
  }
}

function assertHeld(r: RetryStormResult): void {
  assert.equal(r.sent, r.orders, 'every order e-mailed, by the provider’s own count');
  assert.equal(r.missing, 0);
  assert.equal(r.duplicates, 0);
  assert.equal(r.dead, 0, 'no transient failure ended dead');
  assert.equal(r.deadAlerts, 0);
  assert.ok(r.breakerOpened >= 1, `the breaker opened (${r.breakerOpened})`);
  assert.ok(r.maxRps <= r.limitRps * 1.1, `max ${r.maxRps}/s within ${r.limitRps}/s + 10%`);
  assert.ok(r.requests > r.orders, 'the outage was met (503s)');
}

test('embedded: a provider outage ends with every e-mail sent once, none dead, the limit held', async () => {
  assertHeld(await embedded());
});

test('kafka: a provider outage ends with every e-mail sent once, none dead, the limit held', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 4);
  assertHeld(await runRetryStorm({ db, transport, schema, topic, ...small }));
});

test('naive twin: without the rate limiter the backlog hits the recovering provider above its limit', async () => {
  const r = await embedded('no-limiter');
  assert.equal(r.duplicates, 0, 'idempotency keys still hold');
  assert.ok(r.maxRps > r.limitRps * 1.1, `max ${r.maxRps}/s above ${r.limitRps}/s + 10%`);
});

test('dead effects raise the dead-letter alerting (count: the effects ledger’s dead)', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'fx_alerts';
  await migrate(db, { schema });
  const provider = await startEmailProvider();
  t.after(() => provider.close());
  const effects = createEffects({ schema });
  const seen: DeadLetterAlert[] = [];
  const alerts = createDeadLetterAlerts({
    db,
    schema,
    everyMs: 100,
    count: (on) => effects.count(on, 'dead'),
    onAlert: (alert) => seen.push(alert),
    logger: silentLogger,
  });
  t.after(() => alerts.close());
  await alerts.start();
  // An invalid recipient is a permanent refusal (422): the effect is dead at once.
  await db.transaction((tx) =>
    effects.schedule(tx, { key: 'order-1', kind: 'email', payload: { to: 'nobody', subject: 'x', text: 'x' } }),
  );
  const email = emailProviderClient({ url: provider.url });
  const sender = createSender({ db, schema, provider: email.send, pollIntervalMs: 20, logger: silentLogger });
  t.after(() => sender.close());
  await sender.start();
  await eventually(async () => seen.length > 0, 10_000, 'the alert');
  assert.equal(seen[0]!.kind, 'non-empty');
  assert.equal(seen[0]!.dead, 1);
  assert.equal(alerts.dead, 1);
});
