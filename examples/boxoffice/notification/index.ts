// The notification service: one e-mail per (order, kind) to the reference e-mail provider. The handler schedules it in
// the consumer's transaction (emails.ts); a sender performs it with the effect id as the idempotency key, at the
// provider's rate (rate limiter), and stops calling while the provider keeps failing (circuit breaker), which also
// pauses the consumer: the backlog waits in the log, not in the provider's error rate.
import {
  type BackpressureSnapshot,
  backpressureMetrics,
  type CircuitBreakerOptions,
  createConsumer,
  createEffects,
  createSender,
  type EffectLookup,
  type EffectProvider,
  pauseWhileOpen,
  type SenderOptions,
  stderrLogger,
} from 'effectively';
import { emailProviderClient } from '../../email-provider/client.ts';
import { type BoxofficeDeps, dedupRetention, groupName, type RunningService } from '../shared/deps.ts';
import { ordersTopic } from '../shared/events.ts';
import { createTables } from '../shared/sql.ts';
import { cancellationKind, confirmationKind, notificationHandler } from './emails.ts';

export { cancellationKind, confirmationKind } from './emails.ts';

export interface NotificationOptions {
  /** The e-mail provider's base URL (examples/email-provider). */
  emailUrl: string;
  /** E-mails per second the provider allows (default 10). */
  ratePerSecond?: number;
  /** The breaker (default: opens when half of at least 10 calls fail, probes after 5 s). */
  breaker?: CircuitBreakerOptions;
  /** The sender's other settings (call timeout, lease, backoff...). */
  sender?: Partial<Omit<SenderOptions, 'db' | 'schema' | 'provider' | 'lookup' | 'kinds' | 'breaker'>>;
  /** Replaces the provider port (default: the reference client on `emailUrl`, with its lookup). */
  port?: { send: EffectProvider; lookup?: EffectLookup };
}

/** The running service, and what its sender and consumer show (breaker state, calls, paused...) for a report. */
export interface NotificationService extends RunningService {
  metrics(): Promise<BackpressureSnapshot>;
}

export async function startNotification(
  deps: BoxofficeDeps,
  options: NotificationOptions,
): Promise<NotificationService> {
  const { db, schema } = deps;
  const logger = deps.logger ?? stderrLogger;
  await createTables(db, import.meta.url, schema);
  const effects = createEffects({ schema });
  const consumer = createConsumer({
    db,
    transport: deps.transport,
    schema,
    group: groupName(deps, 'notification'),
    topics: [ordersTopic],
    retention: dedupRetention,
    logger,
    ...(deps.faults === undefined ? {} : { faults: deps.faults }),
    handler: notificationHandler(schema, effects),
  });
  const port = options.port ?? emailProviderClient({ url: options.emailUrl });
  const sender = createSender({
    db,
    schema,
    kinds: [confirmationKind, cancellationKind],
    provider: port.send,
    ...(port.lookup === undefined ? {} : { lookup: port.lookup }),
    rateLimit: { perSecond: options.ratePerSecond ?? 10 },
    breaker: options.breaker ?? { failureRatio: 0.5, minimumCalls: 10, openMs: 5000 },
    logger,
    onDead: (effect, error) =>
      logger.error('e-mail given up', { effectId: effect.id, kind: effect.kind, error: String(error) }),
    ...options.sender,
  });
  const stopPausing = pauseWhileOpen(sender.breaker!, consumer);
  const metrics = backpressureMetrics({ sender, consumers: [consumer] });
  await consumer.start();
  await sender.start();
  return {
    name: 'notification',
    metrics: () => metrics.metrics(),
    async close() {
      stopPausing();
      metrics.close();
      await consumer.close();
      await sender.close();
    },
  };
}
