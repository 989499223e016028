// The payment service: charges a confirmed order and refunds a cancelled one on the payment provider. The handler
// writes the ledger and schedules the call in the consumer's transaction (ledger.ts); a sender performs it outside
// any transaction, with the effect id as the idempotency key, behind a rate limiter and a circuit breaker. A call
// whose answer was lost (a timeout after charging) is settled by a lookup by key, never by a second charge.
import {
  type BackpressureSnapshot,
  backpressureMetrics,
  createConsumer,
  createEffects,
  createSender,
  type EffectLookup,
  type EffectProvider,
  type SenderOptions,
  stderrLogger,
} from 'effectively';
import { paymentProviderClient } from '../../payment-provider/client.ts';
import { type BoxofficeDeps, dedupRetention, groupName, type RunningService } from '../shared/deps.ts';
import { ordersTopic } from '../shared/events.ts';
import { createTables } from '../shared/sql.ts';
import { chargeKind, paymentHandler, refundKind } from './ledger.ts';

export { balance, chargeKind, refundKind } from './ledger.ts';

export interface PaymentOptions {
  /** The payment provider's base URL (examples/payment-provider). */
  providerUrl: string;
  /** Calls per second the provider allows (default 20). */
  ratePerSecond?: number;
  /** The sender's other settings (call timeout, lease, backoff, breaker...). */
  sender?: Partial<Omit<SenderOptions, 'db' | 'schema' | 'provider' | 'lookup' | 'kinds'>>;
  /** Replaces the provider port (default: the reference client on `providerUrl`, with its lookups). */
  port?: { send: EffectProvider; lookup?: EffectLookup };
  /** Default true: a cancel that comes before its confirm waits for it. False: the naive twin of the tests. */
  waitForConfirm?: boolean;
}

/** One port for both kinds: a charge goes to /charges, a refund to /refunds; each is looked up where it was sent. */
function referencePort(url: string): { send: EffectProvider; lookup: EffectLookup } {
  const client = paymentProviderClient({ url });
  const endpoint = (kind: string) => (kind === refundKind ? client.refund : client.charge);
  return {
    send: (effect, context) => endpoint(effect.kind)(effect, context),
    lookup: (effect, context) => endpoint(effect.kind).lookup(effect, context),
  };
}

/** The running service, and what its sender and consumer show (breaker state, calls, paused...) for a report. */
export interface PaymentService extends RunningService {
  metrics(): Promise<BackpressureSnapshot>;
}

export async function startPayment(deps: BoxofficeDeps, options: PaymentOptions): Promise<PaymentService> {
  const { db, schema } = deps;
  const logger = deps.logger ?? stderrLogger;
  await createTables(db, import.meta.url, schema);
  const effects = createEffects({ schema });
  const consumer = createConsumer({
    db,
    transport: deps.transport,
    schema,
    group: groupName(deps, 'payment'),
    topics: [ordersTopic],
    retention: dedupRetention,
    logger,
    ...(deps.faults === undefined ? {} : { faults: deps.faults }),
    handler: paymentHandler({ schema, effects, waitForConfirm: options.waitForConfirm ?? true }),
  });
  const port = options.port ?? referencePort(options.providerUrl);
  const sender = createSender({
    db,
    schema,
    kinds: [chargeKind, refundKind],
    provider: port.send,
    ...(port.lookup === undefined ? {} : { lookup: port.lookup }),
    rateLimit: { perSecond: options.ratePerSecond ?? 20 },
    logger,
    onDead: (effect, error) =>
      logger.error('payment given up', { effectId: effect.id, kind: effect.kind, error: String(error) }),
    ...options.sender,
  });
  const metrics = backpressureMetrics({ sender, consumers: [consumer] });
  await consumer.start();
  await sender.start();
  return {
    name: 'payment',
    metrics: () => metrics.metrics(),
    async close() {
      metrics.close();
      await consumer.close();
      await sender.close();
    },
  };
}
