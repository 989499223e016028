// A reference e-mail provider for the examples and tests: a small HTTP service (node:http) that honours an
// `Idempotency-Key` header the way payment and e-mail APIs do (same key: the same response again, no second send),
// counts every real send, and can be told to answer 503, time out, or answer 429 with Retry-After for a while.
//
//   POST   /emails                 {"to","subject","text"} + Idempotency-Key  → 201 {"id","to","status":"sent"}
//   GET    /emails/by-key/:key     the stored response for a key, or 404 (a lookup for in-doubt calls)
//   POST   /admin/faults           a FaultSpec as JSON → 204       DELETE /admin/faults → 204 (healthy again)
//   GET    /admin/stats            {"sends","requests","replays","byKey"}
//
// Run alone: `PORT=8025 node --import tsx examples/email-provider/server.ts`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  adminFaults,
  FaultSwitch,
  IdempotencyStore,
  idempotencyKeyOf,
  listen,
  readBody,
  reply,
  runAlone,
} from '../provider-kit/http.ts';

export type FaultMode = 'unavailable' | 'timeout' | 'rate-limited';

/** How the provider misbehaves, and for how long. */
export interface FaultSpec {
  /** `unavailable`: 503 without sending. `rate-limited`: 429 without sending. `timeout`: no answer (see `sendFirst`). */
  mode: FaultMode;
  /** For this long (ms), then healthy again (default: until `heal`, unless `times` is given). */
  forMs?: number;
  /** For this many requests to POST /emails, then healthy again. */
  times?: number;
  /** The `Retry-After` header of a 429 or 503, in seconds (default 1 for 429, none for 503). */
  retryAfterSeconds?: number;
  /** `timeout`: send the e-mail, then never answer, like a provider whose response is lost (default true). */
  sendFirst?: boolean;
}

export interface EmailSend {
  id: string;
  idempotencyKey: string | null;
  to: string;
  subject: string;
}

export interface EmailProvider {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Real sends: what a recipient would receive. */
  readonly sends: number;
  /** POST /emails requests, replays and refusals included. */
  readonly requests: number;
  /** Requests answered from the idempotency store (no send). */
  readonly replays: number;
  /** Every real send, in order. */
  readonly sent: readonly EmailSend[];
  /** Real sends per idempotency key. */
  sendsFor(idempotencyKey: string): number;
  fail(fault: FaultSpec): void;
  heal(): void;
  close(): Promise<void>;
}

export interface EmailProviderOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** The clock for `forMs` (default `Date.now`). */
  now?: () => number;
}

export async function startEmailProvider(options: EmailProviderOptions = {}): Promise<EmailProvider> {
  const store = new IdempotencyStore();
  const faults = new FaultSwitch<FaultSpec>(options.now ?? Date.now);
  const sent: EmailSend[] = [];
  const perKey = new Map<string, number>();
  let requests = 0;

  function send(key: string | null, message: { to: string; subject: string }) {
    const id = `msg_${String(sent.length + 1).padStart(6, '0')}`;
    sent.push({ id, idempotencyKey: key, to: message.to, subject: message.subject });
    if (key !== null) perKey.set(key, (perKey.get(key) ?? 0) + 1);
    return { id, to: message.to, status: 'sent' };
  }

  async function postEmail(request: IncomingMessage, response: ServerResponse): Promise<void> {
    requests += 1;
    const text = await readBody(request);
    const key = idempotencyKeyOf(request);
    const current = faults.next();
    if (current?.mode === 'rate-limited') {
      return reply(response, 429, { error: 'rate_limited' }, { 'retry-after': String(current.retryAfterSeconds ?? 1) });
    }
    if (current?.mode === 'unavailable') {
      const headers: Record<string, string> =
        current.retryAfterSeconds === undefined ? {} : { 'retry-after': String(current.retryAfterSeconds) };
      return reply(response, 503, { error: 'unavailable' }, headers);
    }
    if (store.answered(key, text, response)) return;
    let message: { to?: unknown; subject?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return reply(response, 400, { error: 'invalid_json' });
    }
    if (typeof message.to !== 'string' || !message.to.includes('@') || typeof message.subject !== 'string') {
      // Not stored: a corrected request with the same key may still go (as the big APIs do for validation errors).
      return reply(response, 422, { error: 'invalid_recipient_or_subject' });
    }
    if (current?.mode === 'timeout' && current.sendFirst === false) return listening.hold(response);
    const entry = store.begin(key, text);
    const body = send(key, { to: message.to, subject: message.subject });
    store.finish(entry, 201, body);
    // Sent, but the answer never comes: the caller cannot tell whether it went.
    if (current?.mode === 'timeout') return listening.hold(response);
    reply(response, 201, body);
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://provider').pathname;
    if (request.method === 'POST' && path === '/emails') return postEmail(request, response);
    if (request.method === 'GET' && path.startsWith('/emails/by-key/')) {
      return store.answerLookup(decodeURIComponent(path.slice('/emails/by-key/'.length)), response);
    }
    if (await adminFaults(path, request, response, provider)) return;
    if (path === '/admin/stats' && request.method === 'GET') {
      return reply(response, 200, {
        sends: sent.length,
        requests,
        replays: store.replays,
        byKey: Object.fromEntries(perKey),
      });
    }
    reply(response, 404, { error: 'not_found' });
  }

  const listening = await listen(route, options);
  const provider: EmailProvider = {
    url: listening.url,
    get sends() {
      return sent.length;
    },
    get requests() {
      return requests;
    },
    get replays() {
      return store.replays;
    },
    sent,
    sendsFor: (key) => perKey.get(key) ?? 0,
    fail(spec) {
      if (!['unavailable', 'timeout', 'rate-limited'].includes(spec.mode)) throw new Error(`unknown mode ${spec.mode}`);
      faults.set(spec);
    },
    heal: () => faults.heal(),
    close: () => listening.close(),
  };
  return provider;
}

await runAlone(import.meta.url, 'email provider', 8025, startEmailProvider);
