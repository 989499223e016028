// What the notification and payment services share: a consumer of boxoffice.orders whose handler schedules effects
// in its transaction, and one sender that performs them on a provider with the effect id as the idempotency key,
// behind a rate limiter and a circuit breaker; while the breaker is open the consumer is paused, so the backlog waits
// in the log, not in the provider's error rate.
import {
  type BackpressureSnapshot,
  backpressureMetrics,
  type CircuitBreakerOptions,
  createConsumer,
  createEffects,
  createSender,
  type EffectLookup,
  type EffectProvider,
  type Effects,
  type EventHandler,
  pauseWhileOpen,
  type SenderOptions,
  stderrLogger,
} from 'effectively';
import { type BoxofficeDeps, dedupRetention, groupName, type RunningService } from './shared/deps.ts';
import { ordersTopic } from './shared/events.ts';

/** The sender's settings a service leaves to its caller (call timeout, lease, backoff, attempts...). */
export type SenderSettings = Partial<
  Omit<SenderOptions, 'db' | 'schema' | 'provider' | 'lookup' | 'kinds' | 'rateLimit' | 'breaker'>
>;

/** The provider port: the call, and the lookup that settles a call whose answer was lost. */
export interface ProviderPort {
  send: EffectProvider;
  lookup?: EffectLookup;
}

export interface EffectServiceOptions {
  /** The service's name; its consumer group is `boxoffice-<name>`. */
  name: string;
  /** The handler, given the effects ledger it schedules on. */
  handler: (effects: Effects) => EventHandler;
  /** The effect kinds its sender performs. */
  kinds: string[];
  port: ProviderPort;
  /** Calls per second the provider allows. */
  ratePerSecond: number;
  breaker: CircuitBreakerOptions;
  sender?: SenderSettings | undefined;
}

/** The running service, and what its sender and consumer show (breaker state, calls, paused...) for a report. */
export interface EffectService extends RunningService {
  metrics(): Promise<BackpressureSnapshot>;
}

export async function startEffectService(deps: BoxofficeDeps, options: EffectServiceOptions): Promise<EffectService> {
  const { db, schema } = deps;
  const logger = deps.logger ?? stderrLogger;
  const effects = createEffects({ schema });
  const consumer = createConsumer({
    db,
    transport: deps.transport,
    schema,
    group: groupName(deps, options.name),
    topics: [ordersTopic],
    retention: dedupRetention,
    logger,
    ...(deps.faults === undefined ? {} : { faults: deps.faults }),
    handler: options.handler(effects),
  });
  const { send, lookup } = options.port;
  const sender = createSender({
    db,
    schema,
    kinds: options.kinds,
    provider: send,
    ...(lookup === undefined ? {} : { lookup }),
    rateLimit: { perSecond: options.ratePerSecond },
    breaker: options.breaker,
    logger,
    onDead: (effect, error) =>
      logger.error(`${options.name}: effect given up`, { id: effect.id, error: String(error) }),
    ...options.sender,
  });
  const stopPausing = pauseWhileOpen(sender.breaker!, consumer);
  const metrics = backpressureMetrics({ sender, consumers: [consumer] });
  await consumer.start();
  await sender.start();
  return {
    name: options.name,
    metrics: () => metrics.metrics(),
    async close() {
      stopPausing();
      metrics.close();
      await consumer.close();
      await sender.close();
    },
  };
}
