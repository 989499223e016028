// The payment service: charges a confirmed order and refunds a cancelled one on the payment provider. The handler
// writes the ledger and schedules the call in the consumer's transaction (ledger.ts); a sender performs it outside
// any transaction, with the effect id as the idempotency key, behind a rate limiter and a circuit breaker. A call
// whose answer was lost (a timeout after charging) is settled by a lookup by key, never by a second charge.
import type { CircuitBreakerOptions } from 'effectively';
import { paymentProviderClient } from '../../payment-provider/client.ts';
import { type EffectService, type ProviderPort, type SenderSettings, startEffectService } from '../effect-service.ts';
import type { BoxofficeDeps } from '../shared/deps.ts';
import { createTables } from '../shared/sql.ts';
import { chargeKind, paymentHandler, refundKind } from './ledger.ts';

export { balance, chargeKind, refundKind } from './ledger.ts';

export interface PaymentOptions {
  /** The payment provider's base URL (examples/payment-provider). */
  providerUrl: string;
  /** Calls per second the provider allows (default 20). */
  ratePerSecond?: number;
  /** The breaker (default: opens when half of at least 10 calls fail, probes after 5 s). */
  breaker?: CircuitBreakerOptions;
  /** The sender's other settings (call timeout, lease, backoff...). */
  sender?: SenderSettings;
  /** Replaces the provider port (default: the reference client on `providerUrl`, with its lookups). */
  port?: ProviderPort;
  /** Default true: a cancel that comes before its confirm waits for it. False: the naive twin of the tests. */
  waitForConfirm?: boolean;
}

/** One port for both kinds: a charge goes to /charges, a refund to /refunds; each is looked up where it was sent. */
function referencePort(url: string): ProviderPort {
  const client = paymentProviderClient({ url });
  const endpoint = (kind: string) => (kind === refundKind ? client.refund : client.charge);
  return {
    send: (effect, context) => endpoint(effect.kind)(effect, context),
    lookup: (effect, context) => endpoint(effect.kind).lookup(effect, context),
  };
}

export async function startPayment(deps: BoxofficeDeps, options: PaymentOptions): Promise<EffectService> {
  await createTables(deps.db, import.meta.url, deps.schema);
  const waitForConfirm = options.waitForConfirm ?? true;
  return startEffectService(deps, {
    name: 'payment',
    handler: (effects) => paymentHandler({ schema: deps.schema, effects, waitForConfirm }),
    kinds: [chargeKind, refundKind],
    port: options.port ?? referencePort(options.providerUrl),
    ratePerSecond: options.ratePerSecond ?? 20,
    breaker: options.breaker ?? { failureRatio: 0.5, minimumCalls: 10, openMs: 5000 },
    sender: options.sender,
  });
}
