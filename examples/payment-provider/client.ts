// The provider ports for the reference payment provider (./server.ts): `httpProvider` on its `/charges` and
// `/refunds` endpoints, each effect's payload as the body and its id as the Idempotency-Key. Each carries its lookup
// (`/charges/by-key/<id>`, `/refunds/by-key/<id>`), which settles a call whose answer was lost.
import { type HttpProvider, httpProvider } from 'effectively';

export interface PaymentClient {
  /** Payload `{ orderId, amountCents, customer? }`. */
  charge: HttpProvider;
  /** Payload `{ orderId, chargeKey, amountCents }`: `chargeKey` is the charge's idempotency key (its effect id). */
  refund: HttpProvider;
}

export function paymentProviderClient(options: { url: string }): PaymentClient {
  const endpoint = (path: string, name: string) =>
    httpProvider({ url: `${options.url.replace(/\/+$/, '')}/${path}`, name, body: (effect) => effect.payload });
  return {
    charge: endpoint('charges', 'payment provider (charges)'),
    refund: endpoint('refunds', 'payment provider (refunds)'),
  };
}
