import { invalidOptions } from '../errors.ts';
import { sleep as realSleep } from '../observability/sleep.ts';

export interface RateLimiterOptions {
  /** Calls allowed per second on average (required; a positive number). */
  perSecond: number;
  /** Calls allowed at once after a quiet spell: the bucket's size (default 1: never more than `perSecond` + 1 in any second). */
  burst?: number;
  /** The clock, in milliseconds (default `performance.now()`: monotonic, a wall-clock step does not stall it). Inject one to test in virtual time. */
  now?: () => number;
  /** How `take` waits (default a real, abortable `sleep`). Inject one that advances a virtual clock to test. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A token bucket: `perSecond` tokens flow in, at most `burst` are kept, each call takes one. No timers of its own. */
export interface RateLimiter {
  /** Takes `n` tokens when there are that many (true), or takes none (false). */
  tryTake(n?: number): boolean;
  /** Whole tokens there now. */
  available(): number;
  /** Milliseconds until `n` tokens are there (0 when they are there now). */
  waitMs(n?: number): number;
  /** Waits for a token and takes it; false when `signal` aborted first (nothing taken). */
  take(signal?: AbortSignal): Promise<boolean>;
  readonly perSecond: number;
  readonly burst: number;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { perSecond } = options;
  const burst = options.burst ?? 1;
  if (!(perSecond > 0 && Number.isFinite(perSecond))) throw invalidOptions('perSecond', 'a positive, finite number');
  if (!(Number.isInteger(burst) && burst >= 1)) throw invalidOptions('burst', 'an integer of at least 1');
  const now = options.now ?? (() => performance.now());
  const wait = options.sleep ?? realSleep;
  const perMs = perSecond / 1000;
  let tokens = burst;
  let refilledAt = now();

  function refill(): void {
    const at = now();
    // A clock that steps back (or a virtual one reset) must not mint tokens.
    if (at > refilledAt) tokens = Math.min(burst, tokens + (at - refilledAt) * perMs);
    refilledAt = Math.max(refilledAt, at);
  }

  const limiter: RateLimiter = {
    perSecond,
    burst,
    tryTake(n = 1) {
      refill();
      if (tokens + 1e-9 < n) return false;
      tokens -= n;
      return true;
    },
    available() {
      refill();
      return Math.floor(tokens + 1e-9);
    },
    waitMs(n = 1) {
      refill();
      if (n > burst) throw invalidOptions('n', `at most the burst (${burst})`);
      return tokens + 1e-9 >= n ? 0 : Math.ceil((n - tokens) / perMs);
    },
    async take(signal) {
      while (!signal?.aborted) {
        if (limiter.tryTake()) return true;
        await wait(limiter.waitMs(), signal);
      }
      return false;
    },
  };
  return limiter;
}
