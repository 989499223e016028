// The notification service: one e-mail per (order, kind) to the reference e-mail provider. The handler schedules it in
// the consumer's transaction (emails.ts); a sender performs it with the effect id as the idempotency key, at the
// provider's rate, and stops calling while the provider keeps failing (../effect-service.ts).
import type { CircuitBreakerOptions } from 'effectively';
import { emailProviderClient } from '../../email-provider/client.ts';
import { type EffectService, type ProviderPort, type SenderSettings, startEffectService } from '../effect-service.ts';
import type { BoxofficeDeps } from '../shared/deps.ts';
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
  sender?: SenderSettings;
  /** Replaces the provider port (default: the reference client on `emailUrl`, with its lookup). */
  port?: ProviderPort;
}

export async function startNotification(deps: BoxofficeDeps, options: NotificationOptions): Promise<EffectService> {
  await createTables(deps.db, import.meta.url, deps.schema);
  return startEffectService(deps, {
    name: 'notification',
    handler: (effects) => notificationHandler(deps.schema, effects),
    kinds: [confirmationKind, cancellationKind],
    port: options.port ?? emailProviderClient({ url: options.emailUrl }),
    ratePerSecond: options.ratePerSecond ?? 10,
    breaker: options.breaker ?? { failureRatio: 0.5, minimumCalls: 10, openMs: 5000 },
    sender: options.sender,
  });
}
