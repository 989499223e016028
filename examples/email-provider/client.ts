// The provider port over HTTP for the reference e-mail provider (./server.ts): the effect's id goes out as the
// `Idempotency-Key`; 5xx, 408, 409 and 429 are transient (with the Retry-After they carry), other 4xx permanent.
import type { EffectLookup, EffectProvider, PendingEffect } from '../../src/effects/provider.ts';
import { ProviderError } from '../../src/effects/provider.ts';

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

/** A Retry-After header in ms: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: () => number = Date.now): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now());
}

const transientStatus = (status: number) => status >= 500 || status === 408 || status === 409 || status === 429;

export function emailProviderClient(options: EmailClientOptions): EmailClient {
  const base = options.url.replace(/\/+$/, '');
  const message = options.message ?? ((effect: PendingEffect) => effect.payload);
  const now = options.now ?? Date.now;

  /** A fetch whose network failure (nothing answered) is transient; an abort (the sender's timeout) passes through. */
  async function request(path: string, init: RequestInit, signal: AbortSignal): Promise<Response> {
    try {
      return await fetch(`${base}${path}`, { ...init, signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ProviderError('transient', `e-mail provider unreachable: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  async function failure(response: Response): Promise<ProviderError> {
    const text = await response.text().catch(() => '');
    const what = `e-mail provider answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    const details = { status: response.status };
    if (!transientStatus(response.status)) return new ProviderError('permanent', what, { details });
    const wait = retryAfterMs(response.headers.get('retry-after'), now);
    return new ProviderError('transient', what, wait === undefined ? { details } : { details, retryAfterMs: wait });
  }

  return {
    async send(effect, { idempotencyKey, signal }) {
      const response = await request(
        '/emails',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
          body: JSON.stringify(message(effect)),
        },
        signal,
      );
      if (!response.ok) throw await failure(response);
      const body = (await response.json()) as { id?: string };
      return body.id === undefined ? {} : { reference: body.id };
    },
    async lookup(_effect, { idempotencyKey, signal }) {
      const response = await request(`/emails/by-key/${encodeURIComponent(idempotencyKey)}`, {}, signal);
      if (response.status === 404) {
        await response.text();
        return undefined;
      }
      if (!response.ok) throw await failure(response);
      const body = (await response.json()) as { id?: string };
      return body.id === undefined ? {} : { reference: body.id };
    },
  };
}
