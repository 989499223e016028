// One run of the retry-storm scenario: orders flow in, a notification consumer schedules one e-mail effect per order
// in its transaction, a sender calls the reference e-mail provider over HTTP through a rate limiter and a circuit
// breaker, and the provider answers 503 for the first `outageMs` of traffic. The breaker opens (and pauses the
// consumer), probes, closes when the provider is back; the backlog then drains at the provider's limit, not faster.

import { emailProviderClient } from '../../examples/email-provider/client.ts';
import { startEmailProvider } from '../../examples/email-provider/server.ts';
import { type BackpressureSnapshot, backpressureMetrics } from '../../src/backpressure/metrics.ts';
import { pauseWhileOpen } from '../../src/backpressure/pause-while-open.ts';
import { maxPerWindow } from '../../src/backpressure/rate-window.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/port.ts';
import { createDeadLetterAlerts } from '../../src/deadletter/alerts.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { createSender } from '../../src/effects/sender.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import type { Transport } from '../../src/transport/port.ts';
import { auditSends, confirmation, type OrderPlaced, publishOrders } from './orders.ts';
import { recordRequests } from './request-log.ts';

export interface RetryStormOptions {
  db: Db;
  transport: Transport;
  schema: string;
  topic: string;
  orders: number;
  /** The provider's limit: the sender's rate limit, calls per second. */
  ratePerSecond: number;
  /** How long the provider answers 503, from the first request it receives. */
  outageMs: number;
  /** Partitions of the orders topic (default 4). */
  partitions?: number;
  /** Orders published per second (default twice the rate: the backlog builds up during the outage). */
  publishPerSecond?: number;
  /** `no-limiter` is the naive twin: the same sender and breaker without the rate limiter. */
  naive?: 'no-limiter' | undefined;
  /** How long every e-mail may take to be sent before the run stops waiting (default 120 s). */
  settleMs?: number;
  log: (line: string) => void;
}

export interface RetryStormResult {
  orders: number;
  /** Real sends, by the provider's own count. */
  sent: number;
  /** Real sends beyond one per order. */
  duplicates: number;
  /** Orders whose e-mail was never sent. */
  missing: number;
  /** The most POST /emails the provider received in any 1 s window. */
  maxRps: number;
  limitRps: number;
  /** Requests the provider received (503s included). */
  requests: number;
  breakerOpened: number;
  /** Dead effects in the ledger. */
  dead: number;
  /** Alerts raised by the dead-effect alerting (dead letters' alerting with the effects' count). */
  deadAlerts: number;
  /** How long the consumer was held paused by the open breaker, in total. */
  consumerPausedMs: number;
  /** The highest consumer lag sampled. */
  maxLag: number;
  durationMs: number;
}

const kind = 'email:confirmation';
/** The breaker's settings: trips on half the calls failing, at least 10 of them; probes after 1 s open. */
const breaker = { failureRatio: 0.5, windowMs: 10_000, minimumCalls: 10, openMs: 1000, halfOpenCalls: 1 };
const concurrency = 8;

/**
 * Calls one effect may fail during an outage of `outageMs` with this breaker, at worst: the calls that trip it (at
 * most `minimumCalls`, plus the others in flight then), then one half-open probe per `openMs` while it lasts, plus
 * the call that succeeds. With `maxAttempts` above this, no transient outage of that length ends an effect dead;
 * the backoff alone (full jitter, which may be 0) gives no such bound.
 */
export function attemptsToRideOut(outageMs: number): number {
  return breaker.minimumCalls + concurrency + Math.ceil(outageMs / breaker.openMs) + 1;
}

export async function runRetryStorm(options: RetryStormOptions): Promise<RetryStormResult> {
  const { db, transport, schema, topic, log } = options;
  const group = `${schema}-notifications`;
  const started = Date.now();
  await migrate(db, { schema });
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: options.partitions ?? 4 }]);

  const provider = await startEmailProvider();
  if (options.outageMs > 0) provider.fail({ mode: 'unavailable' });
  let healTimer: NodeJS.Timeout | undefined;
  const requestLog = recordRequests(provider.url, () => {
    // The outage lasts `outageMs` from the first request: a slow group join must not eat it.
    healTimer ??= setTimeout(() => provider.heal(), options.outageMs);
  });
  const effects = createEffects({ schema });
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    // Small batches: on the embedded database (one session) the sender's statements wait less behind a batch.
    maxBatchSize: 100,
    logger: silentLogger,
    handler: async (event, { tx }) => {
      const order = event.data as OrderPlaced;
      await effects.schedule(tx, { key: order.orderId, kind, payload: confirmation(order) });
    },
  });
  const email = emailProviderClient({ url: provider.url });
  const sender = createSender({
    db,
    schema,
    provider: email.send,
    lookup: email.lookup,
    kinds: [kind],
    concurrency,
    pollIntervalMs: 50,
    callTimeoutMs: 5000,
    leaseMs: 30_000,
    // A burst of 5% of the rate lets a sender that fell behind claim several effects in one statement, and keeps
    // any second at or under 1.05 × the limit (a token bucket never passes more than rate + burst in one second).
    ...(options.naive === 'no-limiter'
      ? {}
      : {
          rateLimit: { perSecond: options.ratePerSecond, burst: Math.max(1, Math.floor(options.ratePerSecond / 20)) },
        }),
    breaker,
    maxAttempts: attemptsToRideOut(options.outageMs) + 5,
    retry: { baseMs: 250, capMs: 4000 },
    logger: silentLogger,
  });
  const metrics = backpressureMetrics({
    sender,
    consumers: [consumer],
    lag: { source: admin, group, topics: [topic] },
  });
  let pausedSince: number | undefined;
  let consumerPausedMs = 0;
  const stopPausing = pauseWhileOpen(sender.breaker!, consumer, {
    onChange: ({ paused }) => {
      if (paused) pausedSince = Date.now();
      else if (pausedSince !== undefined) consumerPausedMs += Date.now() - pausedSince;
    },
  });
  let deadAlerts = 0;
  const alerts = createDeadLetterAlerts({
    db,
    schema,
    everyMs: 500,
    count: (on) => effects.count(on, 'dead', kind),
    onAlert: () => {
      deadAlerts += 1;
    },
    logger: silentLogger,
  });
  const producer = transport.producer({ clientId: 'retry-storm' });
  const stopPublishing = new AbortController();
  let last: BackpressureSnapshot | undefined;
  let maxLag = 0;
  const report = async () => {
    last = await metrics.metrics();
    maxLag = Math.max(maxLag, last.consumer_lag ?? 0);
  };

  try {
    await consumer.start();
    await sender.start();
    await alerts.start();
    const publishing = publishOrders(producer, {
      topic,
      count: options.orders,
      perSecond: options.publishPerSecond ?? options.ratePerSecond * 2,
      signal: stopPublishing.signal,
    });
    const settleBy = Date.now() + (options.settleMs ?? 120_000);
    let nextLine = Date.now() + 2000;
    for (;;) {
      await report();
      // The sender's own counters (one sender): no count query on the embedded database's one session.
      const done = last!.sender_done_total;
      if (done + last!.sender_dead_total >= options.orders || Date.now() > settleBy) break;
      if (Date.now() >= nextLine) {
        nextLine += 2000;
        log(
          `retry-storm: ${((Date.now() - started) / 1000).toFixed(0)} s breaker=${last!.breaker_state} ` +
            `consumer_paused=${last!.consumer_paused} lag=${last!.consumer_lag} calls=${last!.sender_calls_total} ` +
            `done=${done} provider_sends=${provider.sends}`,
        );
      }
      await sleep(500);
    }
    stopPublishing.abort();
    await publishing;
    await sleep(500); // a late duplicate (or a late dead effect's alert) would show up here
    await report();
  } finally {
    stopPublishing.abort();
    stopPausing();
    metrics.close();
    await sender.close();
    await consumer.close();
    await alerts.close();
    await producer.close();
    clearTimeout(healTimer);
    requestLog.stop();
    await provider.close();
    await admin.close();
  }
  const { duplicates, missing } = auditSends(provider.sent, options.orders);
  return {
    orders: options.orders,
    sent: provider.sends,
    duplicates,
    missing,
    maxRps: maxPerWindow(requestLog.times),
    limitRps: options.ratePerSecond,
    requests: provider.requests,
    breakerOpened: last?.breaker_opened_total ?? 0,
    dead: await effects.count(db, 'dead', kind),
    deadAlerts,
    consumerPausedMs,
    maxLag,
    durationMs: Date.now() - started,
  };
}
