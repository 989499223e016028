import {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitPermit,
  createCircuitBreaker,
} from '../backpressure/circuit-breaker.ts';
import { createRateLimiter, type RateLimiter, type RateLimiterOptions } from '../backpressure/rate-limiter.ts';
import { librarySchema } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { uuidv7 } from '../envelope/uuidv7.ts';
import { invalidOptions } from '../errors.ts';
import { type CloseOptions, within } from '../lifecycle.ts';
import { callBack } from '../observability/callback.ts';
import { errorFields, type Logger, stderrLogger } from '../observability/logger.ts';
import { fullJitter, maxTimerMs, sleep as realSleep } from '../observability/sleep.ts';
import { startEffectSpan } from '../observability/trace-effects.ts';
import { type Claimed, effectClaims } from './claims.ts';
import { abortable, mayStillRun, type Outcome, outcomeOf, reasonOf } from './outcome.ts';
import {
  type EffectLookup,
  type EffectProvider,
  type PendingEffect,
  type ProviderCallContext,
  ProviderError,
  type ProviderResult,
} from './provider.ts';

/** Testing only: the sender's named crash point. A throw (or a hang) there leaves the outcome unrecorded. */
export type SenderFaultPoint =
  /** The provider answered (or failed); the outcome is not yet recorded on the effect. */
  'sender:after-call';

export interface SenderOptions {
  db: Db;
  /** Performs an effect; see `EffectProvider`. */
  provider: EffectProvider;
  /** Asks the provider whether an in-doubt effect was already done, before calling again (default: none). */
  lookup?: EffectLookup;
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /** The kinds this sender performs (default: all). One sender per provider, so each has its own limits. */
  kinds?: string[];
  /** Calls in flight at once (default 4). */
  concurrency?: number;
  /** How long a claim holds an effect before another sender may take it again (default 60000 ms; > `callTimeoutMs`). */
  leaseMs?: number;
  /** A call (and a lookup) not answered by then is aborted: its outcome is unknown, retried with the same key (default 10000 ms). */
  callTimeoutMs?: number;
  /** Wait before looking again when nothing is due (default 500 ms). */
  pollIntervalMs?: number;
  /** Wait after a failed claim (the database) before the next (default 1000 ms). */
  errorBackoffMs?: number;
  /**
   * Calls of one effect, this one included, before a transient failure makes it dead (default 10). Claims count too:
   * an effect claimed more often without a recorded outcome (a sender that dies on it) is dead, not called again.
   */
  maxAttempts?: number;
  /** Backoff between calls of one effect: full jitter in [0, min(capMs, baseMs * 2^(attempt-1))] (default 1000 / 300000 ms). */
  retry?: { baseMs?: number; capMs?: number };
  /** Calls per second to the provider: options for a token bucket, or a limiter shared with others (default: no limit). */
  rateLimit?: RateLimiterOptions | RateLimiter;
  /** Pauses all calls while the provider keeps failing: options, a shared breaker, or `false` (default: the defaults of `createCircuitBreaker`). */
  breaker?: CircuitBreakerOptions | CircuitBreaker | false;
  /** The clock of the limiter, the breaker and Retry-After holds, in ms (default `performance.now()`, monotonic). */
  now?: () => number;
  /** How the sender waits (default a real, abortable sleep). With `now`, lets a test run in virtual time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Randomness of the backoff jitter (default `Math.random`). */
  random?: () => number;
  logger?: Logger;
  /** An effect was given up on (status `dead`): alert someone. */
  onDead?: (effect: PendingEffect, error: unknown) => void;
  /** An effect was done (recorded by this sender). */
  onDone?: (effect: PendingEffect, result: ProviderResult) => void;
  /** Testing only: named crash points. */
  faults?: (point: SenderFaultPoint) => void | Promise<void>;
}

/** Counters since start (a copy each time it is read). */
export interface SenderStats {
  /** Provider calls started (lookups not included). */
  calls: number;
  done: number;
  /** Failures recorded for another attempt later. */
  retried: number;
  dead: number;
  /** Calls aborted by `callTimeoutMs` (outcome unknown). */
  timeouts: number;
  /** In-doubt effects the `lookup` hook settled without a call. */
  settledByLookup: number;
  /** Outcomes that could not be recorded (the database failed): their lease expires and they are tried again. */
  unrecorded: number;
  inFlight: number;
}

export interface Sender {
  start(): Promise<void>;
  readonly stats: SenderStats;
  /** The breaker in use (subscribe with `onStateChange` to pause partitions while it is open), if any. */
  readonly breaker: CircuitBreaker | undefined;
  readonly limiter: RateLimiter | undefined;
  /** True while no call may start: the breaker is open or a provider's Retry-After is running. */
  readonly paused: boolean;
  /** Stops claiming, waits for calls in flight (then aborts them: outcome unknown, retried later). */
  close(options?: CloseOptions): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function isLimiter(value: RateLimiterOptions | RateLimiter): value is RateLimiter {
  return typeof (value as RateLimiter).tryTake === 'function';
}

function isBreaker(value: CircuitBreakerOptions | CircuitBreaker): value is CircuitBreaker {
  return typeof (value as CircuitBreaker).tryAcquire === 'function';
}

function positive(name: string, value: number, integer = false): number {
  if (!(value > 0 && Number.isFinite(value)) || (integer && !Number.isInteger(value))) {
    throw invalidOptions(name, integer ? 'a positive integer' : 'a positive number');
  }
  return value;
}

/**
 * Performs scheduled effects: claims due ones (SKIP LOCKED, a lease per claim: several senders are safe), calls the
 * provider outside any transaction with the effect's id as idempotency key, then records the outcome. Transient
 * failures come back after a full-jitter backoff (never before a Retry-After); permanent ones are dead at once.
 */
export function createSender(options: SenderOptions): Sender {
  const schema = librarySchema(options.schema);
  const concurrency = positive('concurrency', options.concurrency ?? 4, true);
  const callTimeoutMs = positive('callTimeoutMs', options.callTimeoutMs ?? 10_000);
  // Timers take at most 2^31 - 1 ms (a longer one fires at once: every call would time out on the spot).
  if (callTimeoutMs > maxTimerMs) throw invalidOptions('callTimeoutMs', `at most ${maxTimerMs} ms`);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 60_000, true);
  if (leaseMs <= callTimeoutMs) throw invalidOptions('leaseMs', 'longer than callTimeoutMs');
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs ?? 500);
  const errorBackoffMs = positive('errorBackoffMs', options.errorBackoffMs ?? 1000);
  const maxAttempts = positive('maxAttempts', options.maxAttempts ?? 10, true);
  const baseMs = options.retry?.baseMs ?? 1000;
  const capMs = options.retry?.capMs ?? 300_000;
  if (!(baseMs >= 0 && capMs >= baseMs)) throw invalidOptions('retry', 'baseMs >= 0 and capMs >= baseMs');
  if (typeof options.provider !== 'function') throw invalidOptions('provider', 'a function');
  // An empty list (an unset variable in `--kinds "$KINDS"`) must not mean every kind: e-mails POSTed to a webhook.
  const given = options.kinds;
  if (
    given !== undefined &&
    !(Array.isArray(given) && given.length > 0 && given.every((k) => k !== '' && typeof k === 'string'))
  ) {
    throw invalidOptions('kinds', 'a non-empty list of kinds (leave it out for every kind)');
  }
  const kinds = given ?? null;
  const now = options.now ?? (() => performance.now());
  const maxRetryAfterMs = 3_600_000;
  const wait = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const logger = options.logger ?? stderrLogger;
  const { db, provider } = options;
  const claims = effectClaims(schema);
  const limiter =
    options.rateLimit === undefined
      ? undefined
      : isLimiter(options.rateLimit)
        ? options.rateLimit
        : createRateLimiter({ now, sleep: wait, ...options.rateLimit });
  const breakerOption = options.breaker ?? {};
  const breaker =
    breakerOption === false
      ? undefined
      : isBreaker(breakerOption)
        ? breakerOption
        : createCircuitBreaker({ now, logger, ...breakerOption });
  const unsubscribe = breaker?.onStateChange((change) => {
    const fields = { from: change.from, to: change.to, failures: change.failures, calls: change.calls };
    if (change.to === 'open') logger.warn('provider failing: sender paused (circuit open)', fields);
    else logger.info(`circuit ${change.to}`, fields);
  });

  const stop = new AbortController();
  /** Aborts calls still in flight when `close` gave up waiting for them. */
  const hardStop = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const counts = { calls: 0, done: 0, retried: 0, dead: 0, timeouts: 0, settledByLookup: 0, unrecorded: 0 };
  let holdUntil = 0;
  let loop: Promise<void> | undefined;
  let closing: Promise<void> | undefined;

  async function record(effect: Claimed, outcome: Outcome): Promise<void> {
    if (outcome.ok) {
      if (await claims.done(db, effect, outcome.result.reference ?? null)) {
        counts.done += 1;
        callBack(logger, 'onDone', options.onDone, [effect, outcome.result], { id: effect.id });
      }
      return;
    }
    const { error, failure, code } = outcome;
    // A provider's Retry-After is honoured up to an hour: an absurd one must not stop the sender for weeks.
    const retryAfter = outcome.retryAfterMs === undefined ? undefined : Math.min(outcome.retryAfterMs, maxRetryAfterMs);
    if (retryAfter !== undefined) holdUntil = Math.max(holdUntil, now() + retryAfter);
    if (failure !== 'permanent' && effect.attempts < maxAttempts) {
      // The provider may still be working on that call (a timeout, a cut): not before a whole call time has passed.
      const floor = mayStillRun(outcome) ? callTimeoutMs : 0;
      const delayMs = Math.max(fullJitter(effect.attempts, baseMs, capMs, random), retryAfter ?? 0, floor);
      const inDoubt = outcome.inDoubt;
      if (await claims.retry(db, effect, { delayMs, inDoubt, code, error: reasonOf(error) })) counts.retried += 1;
      return;
    }
    if (await claims.dead(db, effect, { code, error: reasonOf(error), inDoubt: outcome.inDoubt })) {
      counts.dead += 1;
      logger.error('effect is dead', { id: effect.id, key: effect.key, kind: effect.kind, ...errorFields(error) });
      callBack(logger, 'onDead', options.onDead, [effect, error], { id: effect.id });
    }
  }

  /** One effect: a lookup when it is in doubt, else (or then) the call; then the outcome recorded. */
  async function perform(effect: Claimed, permit: CircuitPermit | undefined): Promise<void> {
    const controller = new AbortController();
    const timeout = new Error(`provider call timed out after ${callTimeoutMs} ms`);
    const timer = setTimeout(() => controller.abort(timeout), callTimeoutMs);
    timer.unref();
    const onHardStop = () => controller.abort(new Error('sender closed during the call'));
    hardStop.signal.addEventListener('abort', onHardStop, { once: true });
    const context: ProviderCallContext = { idempotencyKey: effect.id, signal: controller.signal };
    const span = startEffectSpan(effect);
    const traced = <T>(fn: () => Promise<T>) => (span ? span.run(fn) : fn());
    let outcome: Outcome;
    // Claimed more often than maxAttempts: earlier claims ended without an outcome; a lookup may still settle it.
    const exhausted = effect.attempts > maxAttempts;
    try {
      let result: ProviderResult | undefined;
      const lookup = options.lookup;
      if (effect.inDoubt && lookup) {
        result = await abortable(
          traced(() => lookup(effect, context)),
          controller.signal,
        ).catch((error: unknown) => {
          if (controller.signal.aborted) throw error;
          logger.warn('effect lookup failed; calling with the same key', { id: effect.id, ...errorFields(error) });
          return undefined;
        });
        if (result) counts.settledByLookup += 1;
      }
      if (!result && exhausted) {
        throw new ProviderError(
          'timeout',
          `claimed ${effect.attempts} times without a recorded outcome (maxAttempts ${maxAttempts}): not called again`,
        );
      }
      if (!result) {
        // the lookup was a request too: the call takes its own token of the rate
        if (effect.inDoubt && options.lookup && limiter && !(await limiter.take(controller.signal))) {
          throw controller.signal.reason;
        }
        counts.calls += 1;
        result =
          (await abortable(
            traced(() => provider(effect, context)),
            controller.signal,
          )) ?? {};
      }
      outcome = { ok: true, result };
    } catch (error) {
      outcome = outcomeOf(error, controller.signal);
      if (!outcome.ok && outcome.failure === 'timeout') counts.timeouts += 1;
    } finally {
      clearTimeout(timer);
      hardStop.signal.removeEventListener('abort', onHardStop);
    }
    span?.end(outcome.ok ? undefined : outcome.error);
    // A permanent refusal is an answer: the provider is up. The call's own permit: a late answer is no probe's.
    if (exhausted && !outcome.ok) permit?.release();
    else if (outcome.ok || outcome.failure === 'permanent') permit?.success();
    else permit?.failure();
    await options.faults?.('sender:after-call');
    await record(effect, outcome);
  }

  function launch(effect: Claimed, permit: CircuitPermit | undefined): void {
    const work = perform(effect, permit).catch((error: unknown) => {
      counts.unrecorded += 1;
      logger.error('effect outcome not recorded; it is tried again when its lease ends', {
        id: effect.id,
        leaseMs,
        ...errorFields(error),
      });
    });
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  /** Milliseconds before the next call may start (0: now), or -1: wait for a call in flight to finish. */
  function gate(): number {
    const held = holdUntil - now();
    if (held > 0) return held;
    const open = breaker?.retryInMs() ?? 0;
    if (open > 0) return open;
    if (inFlight.size >= concurrency || breaker?.capacity() === 0) return inFlight.size > 0 ? -1 : pollIntervalMs;
    return limiter?.waitMs(1) ?? 0;
  }

  function untilOneSettles(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        stop.signal.removeEventListener('abort', done);
        resolve();
      };
      stop.signal.addEventListener('abort', done, { once: true });
      for (const work of inFlight) void work.finally(done);
    });
  }

  async function run(): Promise<void> {
    while (!stop.signal.aborted) {
      const delay = gate();
      if (delay !== 0) {
        // Looked at again at least every poll interval: a shared breaker or limiter may change meanwhile.
        await (delay < 0 ? untilOneSettles() : wait(Math.min(delay, pollIntervalMs), stop.signal));
        continue;
      }
      const room = Math.min(
        concurrency - inFlight.size,
        breaker?.capacity() ?? concurrency,
        limiter?.available() ?? concurrency,
      );
      let claimed: Claimed[];
      try {
        claimed = await claims.claim(db, { limit: room, kinds, leaseId: uuidv7(), leaseMs });
      } catch (error) {
        if (stop.signal.aborted) return;
        logger.error('effect claim failed; retrying', errorFields(error));
        await wait(errorBackoffMs, stop.signal);
        continue;
      }
      for (const effect of claimed) {
        // The breaker may have opened, or a shared limiter emptied, while the claim ran: hand the effect back.
        const permit = stop.signal.aborted ? undefined : breaker?.acquire();
        const permitted = !stop.signal.aborted && (breaker === undefined || permit !== undefined);
        if (permitted && (limiter?.tryTake() ?? true)) {
          launch(effect, permit);
          continue;
        }
        permit?.release();
        await claims.unclaim(db, effect).catch((error: unknown) => {
          logger.warn('could not hand an effect back; it is tried again when its lease ends', errorFields(error));
        });
      }
      if (claimed.length === 0) await wait(pollIntervalMs, stop.signal);
    }
  }

  const sender: Sender = {
    async start() {
      if (closing) throw new Error('sender is closed');
      loop ??= run().catch((error: unknown) => logger.error('sender loop stopped', errorFields(error)));
    },
    get stats() {
      return { ...counts, inFlight: inFlight.size };
    },
    breaker,
    limiter,
    get paused() {
      return holdUntil > now() || breaker?.state === 'open';
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        stop.abort();
        await loop;
        const calls = Promise.allSettled([...inFlight]);
        if (!(await within(calls, timeoutMs))) {
          logger.warn('effect calls still running at close; aborting them', { inFlight: inFlight.size, timeoutMs });
          hardStop.abort();
          await within(calls, 1000);
        }
        unsubscribe?.();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return sender.close();
    },
  };
  return sender;
}
