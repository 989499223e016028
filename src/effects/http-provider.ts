// The provider port over HTTP: POST the effect as JSON with its id as `Idempotency-Key`, read the status code as the
// sender's failure kinds. What a generic target (and the CLI's sender) needs without user code.
import { invalidOptions } from '../errors.ts';
import {
  type EffectLookup,
  type EffectProvider,
  type PendingEffect,
  type ProviderCallContext,
  ProviderError,
  type ProviderResult,
} from './provider.ts';

export interface HttpProviderOptions {
  /**
   * The endpoint each effect is POSTed to (e.g. `http://127.0.0.1:8025/emails`); lookups GET `<url>/by-key/<id>`, with
   * the URL's query string kept on both. Credentials in the URL (`https://user:token@host/…`) are sent as Basic auth
   * and never appear in errors or logs.
   */
  url: string;
  /** Headers sent with every call and lookup, e.g. an API key (default: none). */
  headers?: Record<string, string>;
  /**
   * A call or lookup not answered within this many ms fails as `timeout`: the outcome is unknown, retried with the
   * same key (default: none of its own; the caller's `signal`, i.e. the sender's `callTimeoutMs`, bounds it).
   */
  timeoutMs?: number;
  /** The JSON request body of an effect (default `{ id, key, kind, payload }`). */
  body?: (effect: PendingEffect) => unknown;
  /** Names the target in error messages (default `HTTP provider`). */
  name?: string;
  /** The clock for Retry-After values given as an HTTP date (default `Date.now`). */
  now?: () => number;
}

/** An `EffectProvider` (the call) carrying its `EffectLookup`: `createSender({ provider: http, lookup: http.lookup })`. */
export type HttpProvider = EffectProvider & { lookup: EffectLookup };

/** A Retry-After header in ms: delta seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: () => number = Date.now): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now());
}

/** Worth calling again later: a server error, a request timeout, a conflict (same key in flight), a rate limit. */
const transientStatus = (status: number) => status >= 500 || status === 408 || status === 409 || status === 429;

/**
 * Network errors that prove the request never reached the target: refused, no such host, no route. Anything else (a
 * reset, a socket closed under the request, a stale keep-alive socket) may have come after the target read it.
 */
const notSent = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A status after which the target may have done the work: any 5xx (a gateway's 502 or 504 too), a 409 (in flight). */
const doubtfulStatus = (status: number) => status >= 500 || status === 409;

/** The network error's code (`ECONNREFUSED`, `UND_ERR_SOCKET`), if any. */
function errorCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown; errors?: { code?: unknown }[] } } | undefined)?.cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The target's own id for what it did: `id` or `reference` of a JSON answer, if any. */
function referenceOf(text: string): ProviderResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof body !== 'object' || body === null) return {};
  const { id, reference } = body as { id?: unknown; reference?: unknown };
  const value = [id, reference].find((v) => typeof v === 'string' || typeof v === 'number');
  return value === undefined ? {} : { reference: String(value) };
}

/**
 * The provider port over HTTP. A call POSTs the effect as JSON with `Idempotency-Key: <effect id>`; 2xx is done (its
 * `reference` from the answer's `id` or `reference`); 5xx, 408, 409, 429 and a failed connection are transient (with
 * the answer's Retry-After, seconds or an HTTP date), and in doubt (the target may have done it) after a 5xx, a 409
 * or a connection cut once the request was sent: only a refused or unreachable target proves nothing was done; other
 * 4xx permanent; no answer within `timeoutMs` a timeout (outcome unknown, in doubt). The caller's abort (the sender's timeout or close) passes through as it is.
 */
export function httpProvider(options: HttpProviderOptions): HttpProvider {
  let base: URL;
  try {
    base = new URL(options.url);
  } catch {
    throw invalidOptions('url', 'an absolute http(s) URL');
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw invalidOptions('url', 'an absolute http(s) URL');
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && !(timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    throw invalidOptions('timeoutMs', 'a positive number');
  }
  // fetch refuses a URL with credentials (its TypeError quoted the URL, token and all): they go into a header instead
  const basic =
    base.username || base.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`
      : undefined;
  base.username = '';
  base.password = '';
  base.hash = '';
  base.pathname = base.pathname.replace(/\/+$/, '');
  const url = base.href;
  /** `<path>/by-key/<key>` with the query string kept after it (not `…?q=1/by-key/<key>`). */
  const lookupUrl = (key: string) => {
    const target = new URL(url);
    target.pathname = `${base.pathname}/by-key/${encodeURIComponent(key)}`;
    return target.href;
  };
  const name = options.name ?? 'HTTP provider';
  const body = options.body ?? (({ id, key, kind, payload }: PendingEffect) => ({ id, key, kind, payload }));
  const now = options.now ?? Date.now;

  /** A request and its whole answer under one signal: the caller's, and the own timeout when there is one. */
  async function request(target: string, init: RequestInit, context: ProviderCallContext) {
    const { signal } = context;
    const timer = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const headers = {
      ...(basic === undefined ? {} : { authorization: basic }),
      ...options.headers,
      ...(init.headers as Record<string, string>),
    };
    try {
      const response = await fetch(target, {
        ...init,
        headers,
        // A redirect would turn the POST into a body-less GET whose 200 reads as "sent": a 3xx is refused instead.
        redirect: 'manual',
        signal: timer ? AbortSignal.any([signal, timer]) : signal,
      });
      return { response, text: await response.text() };
    } catch (error) {
      if (signal.aborted) throw error;
      const reason = (error as Error).message;
      if (timer?.aborted) {
        throw new ProviderError('timeout', `${name} did not answer within ${timeoutMs} ms`, { cause: error });
      }
      // Refused or unreachable: nothing was sent. Cut off (a stale keep-alive socket, a reset): the target may have
      // read and done it, so the effect is in doubt. Transient either way, retried with the same key.
      const code = errorCode(error);
      throw new ProviderError('transient', `${name} request failed: ${code ?? reason}`, {
        cause: error,
        inDoubt: code === undefined || !notSent.has(code),
        ...(code === undefined ? {} : { details: { code } }),
      });
    }
  }

  function failure(response: Response, text: string): ProviderError {
    const what = `${name} answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    const details = { status: response.status };
    if (!transientStatus(response.status)) return new ProviderError('permanent', what, { details });
    const wait = retryAfterMs(response.headers.get('retry-after'), now);
    const inDoubt = doubtfulStatus(response.status);
    return new ProviderError(
      'transient',
      what,
      wait === undefined ? { details, inDoubt } : { details, inDoubt, retryAfterMs: wait },
    );
  }

  const send: EffectProvider = async (effect, context) => {
    const { response, text } = await request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': context.idempotencyKey },
        body: JSON.stringify(body(effect)),
      },
      context,
    );
    if (!response.ok) throw failure(response, text);
    return referenceOf(text);
  };

  const lookup: EffectLookup = async (_effect, context) => {
    const { response, text } = await request(lookupUrl(context.idempotencyKey), { method: 'GET' }, context);
    if (response.status === 404) return undefined;
    if (!response.ok) throw failure(response, text);
    return referenceOf(text);
  };

  return Object.assign(send, { lookup });
}
