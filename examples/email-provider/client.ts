// The provider port for the reference e-mail provider (./server.ts): `httpProvider` on its `/emails` endpoint, the
// payload (`{ to, subject, text }`) as the body. The status mapping, Retry-After and the lookup are httpProvider's.
import { type EffectLookup, type EffectProvider, httpProvider, type PendingEffect } from 'effectively';

export { retryAfterMs } from '../../src/effects/http-provider.ts';

export interface EmailClientOptions {
  /** The provider's base URL (`EmailProvider.url`). */
  url: string;
  /** Builds the request body from an effect (default: its payload as is: `{ to, subject, text }`). */
  message?: (effect: PendingEffect) => unknown;
  /** The clock for HTTP-date Retry-After values (default `Date.now`). */
  now?: () => number;
}

export interface EmailClient {
  send: EffectProvider;
  lookup: EffectLookup;
}

export function emailProviderClient(options: EmailClientOptions): EmailClient {
  const http = httpProvider({
    url: `${options.url.replace(/\/+$/, '')}/emails`,
    name: 'e-mail provider',
    body: options.message ?? ((effect) => effect.payload),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return { send: http, lookup: http.lookup };
}
