// A reference payment provider for the examples and tests: a small HTTP service (node:http) that charges and refunds
// under an `Idempotency-Key` (the same key: the first answer again, never a second charge), answers a lookup by key
// (how a caller settles a call whose answer it never got), keeps its own log of charges and refunds (what an audit
// counts), and can be told to answer 503, to charge and then never answer, or to answer slowly.
//
//   POST   /charges               {"orderId","amountCents","customer"?} + Idempotency-Key → 201 {"id","orderId","amountCents","status":"succeeded"}
//   POST   /refunds               {"orderId","chargeKey","amountCents"} + Idempotency-Key  → 201 {"id","chargeId","amountCents","status":"refunded"}
//                                  (chargeKey: the charge's Idempotency-Key; 409 while it is not charged yet)
//   GET    /charges/by-key/:key   the stored answer for a key, or 404; the same for /refunds/by-key/:key
//   POST   /admin/faults          a PaymentFault as JSON → 204        DELETE /admin/faults → 204 (healthy again)
//   GET    /admin/log             {"charges","refunds","requests","replays"}
//
// Run alone: `PORT=8026 node --import tsx examples/payment-provider/server.ts`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import {
  adminFaults,
  FaultSwitch,
  IdempotencyStore,
  idempotencyKeyOf,
  type Lasting,
  listen,
  readBody,
  reply,
  runAlone,
} from '../provider-kit/http.ts';

/** How the provider misbehaves on POST /charges and /refunds, and for how long (`forMs`, `times`, or until healed). */
export interface PaymentFault extends Lasting {
  /** `unavailable`: 503, nothing done. `timeout`: no answer (see `actFirst`). `slow`: the answer after `delayMs`. */
  mode: 'unavailable' | 'timeout' | 'slow';
  /** `timeout`: charge (or refund) first, then never answer, like a lost response (default true). */
  actFirst?: boolean;
  /** `slow`: how long each request takes (default 1000 ms). */
  delayMs?: number;
  /** `unavailable`: the `Retry-After` header, in seconds (default none). */
  retryAfterSeconds?: number;
}

export interface Charge {
  id: string;
  idempotencyKey: string | null;
  orderId: string;
  amountCents: number;
}

export interface Refund {
  id: string;
  idempotencyKey: string | null;
  chargeId: string;
  orderId: string;
  amountCents: number;
}

export interface PaymentProvider {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Every charge made, in order: the money taken. */
  readonly charges: readonly Charge[];
  /** Every refund made, in order. */
  readonly refunds: readonly Refund[];
  /** POST requests, replays and refusals included. */
  readonly requests: number;
  /** Requests answered from the idempotency store (nothing done again). */
  readonly replays: number;
  chargesFor(orderId: string): number;
  refundsFor(orderId: string): number;
  fail(fault: PaymentFault): void;
  heal(): void;
  close(): Promise<void>;
}

/** A refusal (not stored: a corrected or later request with the same key may still go), or what to do. */
type Decision = { status: number; body: unknown } | { act: () => unknown };

const isPositiveInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';
const serial = (prefix: string, n: number) => `${prefix}_${String(n).padStart(6, '0')}`;

export async function startPaymentProvider(
  options: { port?: number; host?: string; now?: () => number } = {},
): Promise<PaymentProvider> {
  const stores = { charges: new IdempotencyStore(), refunds: new IdempotencyStore() };
  const faults = new FaultSwitch<PaymentFault>(options.now ?? Date.now);
  const charges: Charge[] = [];
  const refunds: Refund[] = [];
  const chargeByKey = new Map<string, Charge>();
  let requests = 0;

  function charge(key: string | null, input: Record<string, unknown>): Decision {
    const { orderId, amountCents } = input;
    if (!isText(orderId) || !isPositiveInteger(amountCents)) return { status: 422, body: { error: 'invalid_charge' } };
    return {
      act: () => {
        const made: Charge = { id: serial('ch', charges.length + 1), idempotencyKey: key, orderId, amountCents };
        charges.push(made);
        if (key !== null) chargeByKey.set(key, made);
        return { id: made.id, orderId, amountCents, status: 'succeeded' };
      },
    };
  }

  function refund(key: string | null, input: Record<string, unknown>): Decision {
    const { orderId, chargeKey, amountCents } = input;
    if (!isText(orderId) || !isText(chargeKey) || !isPositiveInteger(amountCents)) {
      return { status: 422, body: { error: 'invalid_refund' } };
    }
    const charged = chargeByKey.get(chargeKey);
    // Not charged (yet): a refund follows its charge; 409 tells the caller to try again later.
    if (!charged) return { status: 409, body: { error: 'charge_not_found' } };
    const refunded = refunds.filter((r) => r.chargeId === charged.id).reduce((sum, r) => sum + r.amountCents, 0);
    if (refunded + amountCents > charged.amountCents) return { status: 422, body: { error: 'refund_exceeds_charge' } };
    return {
      act: () => {
        const id = serial('re', refunds.length + 1);
        refunds.push({ id, idempotencyKey: key, chargeId: charged.id, orderId, amountCents });
        return { id, chargeId: charged.id, amountCents, status: 'refunded' };
      },
    };
  }

  async function post(request: IncomingMessage, response: ServerResponse, what: keyof typeof stores): Promise<void> {
    requests += 1;
    const store = stores[what];
    const text = await readBody(request);
    const key = idempotencyKeyOf(request);
    const fault = faults.next();
    if (fault?.mode === 'unavailable') {
      const retryAfter =
        fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
      return reply(response, 503, { error: 'unavailable' }, retryAfter);
    }
    if (store.answered(key, text, response)) return;
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch {
      return reply(response, 400, { error: 'invalid_json' });
    }
    const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    const decision = (what === 'charges' ? charge : refund)(key, fields);
    if (!('act' in decision)) return reply(response, decision.status, decision.body);
    if (fault?.mode === 'timeout' && fault.actFirst === false) return listening.hold(response);
    const entry = store.begin(key, text); // the key is held from here: a repeat meanwhile gets 409
    if (fault?.mode === 'slow') await delay(fault.delayMs ?? 1000);
    const body = decision.act();
    store.finish(entry, 201, body);
    // Done, but the answer never comes: the caller cannot tell whether the money moved.
    if (fault?.mode === 'timeout') return listening.hold(response);
    reply(response, 201, body);
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://provider').pathname;
    const lookup = /^\/(charges|refunds)\/by-key\/(.+)$/.exec(path);
    if (request.method === 'POST' && (path === '/charges' || path === '/refunds')) {
      return post(request, response, path === '/charges' ? 'charges' : 'refunds');
    }
    if (request.method === 'GET' && lookup) {
      return stores[lookup[1] as keyof typeof stores].answerLookup(decodeURIComponent(lookup[2]!), response);
    }
    if (await adminFaults(path, request, response, provider)) return;
    if (path === '/admin/log' && request.method === 'GET') {
      return reply(response, 200, { charges, refunds, requests, replays: provider.replays });
    }
    reply(response, 404, { error: 'not_found' });
  }

  const listening = await listen(route, options);
  const provider: PaymentProvider = {
    url: listening.url,
    charges,
    refunds,
    get requests() {
      return requests;
    },
    get replays() {
      return stores.charges.replays + stores.refunds.replays;
    },
    chargesFor: (orderId) => charges.filter((c) => c.orderId === orderId).length,
    refundsFor: (orderId) => refunds.filter((r) => r.orderId === orderId).length,
    fail(fault) {
      if (!['unavailable', 'timeout', 'slow'].includes(fault.mode)) throw new Error(`unknown mode ${fault.mode}`);
      faults.set(fault);
    },
    heal: () => faults.heal(),
    close: () => listening.close(),
  };
  return provider;
}

await runAlone(import.meta.url, 'payment provider', 8026, startPaymentProvider);
