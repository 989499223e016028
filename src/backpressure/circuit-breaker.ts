import { invalidOptions } from '../errors.ts';

export type CircuitState = 'closed' | 'open' | 'half-open';

/** `breaker:state` — the breaker moved; `failures`/`calls` are the window's counts that made it trip (when it did). */
export interface CircuitStateChange {
  from: CircuitState;
  to: CircuitState;
  /** The breaker's clock at the change (ms). */
  at: number;
  failures: number;
  calls: number;
}

export interface CircuitBreakerOptions {
  /** Trips when failures / calls in the window reach this (default 0.5). */
  failureRatio?: number;
  /** The sliding window of outcomes that counts (default 30000 ms). */
  windowMs?: number;
  /** Fewer calls than this in the window never trip it (default 10). */
  minimumCalls?: number;
  /** How long it stays open before letting probes through (default 30000 ms). */
  openMs?: number;
  /** Probe calls let through while half-open; all must succeed to close it, one failure opens it again (default 1). */
  halfOpenCalls?: number;
  /** The clock, in milliseconds (default `performance.now()`: monotonic, a wall-clock step does not stall it). Inject one to test in virtual time. */
  now?: () => number;
}

/**
 * Closed: calls go through and their outcomes are counted over a sliding window. Open (the failure ratio reached with
 * at least `minimumCalls`): no call goes through for `openMs`. Half-open: `halfOpenCalls` probes go through; their
 * success closes it, a failure opens it again. It holds no timer: it moves from open to half-open when asked.
 */
export interface CircuitBreaker {
  readonly state: CircuitState;
  /** Asks to make one call: true (a permit; report it with `success`, `failure` or `release`) or false (wait). */
  tryAcquire(): boolean;
  /** How many calls may start now (Infinity while closed, 0 while open, the free probes while half-open). */
  capacity(): number;
  /** Milliseconds until an open breaker lets probes through (0 unless open). */
  retryInMs(): number;
  success(): void;
  failure(): void;
  /** A permit given back unused (the call was not made): counts neither way. */
  release(): void;
  /** Calls `listener` on every state change; returns a function that stops it. */
  onStateChange(listener: (change: CircuitStateChange) => void): () => void;
}

export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const failureRatio = options.failureRatio ?? 0.5;
  const windowMs = options.windowMs ?? 30_000;
  const minimumCalls = options.minimumCalls ?? 10;
  const openMs = options.openMs ?? 30_000;
  const halfOpenCalls = options.halfOpenCalls ?? 1;
  if (!(failureRatio > 0 && failureRatio <= 1)) throw invalidOptions('failureRatio', 'a number in (0, 1]');
  if (!(windowMs > 0)) throw invalidOptions('windowMs', 'a positive number');
  if (!(Number.isInteger(minimumCalls) && minimumCalls >= 1))
    throw invalidOptions('minimumCalls', 'a positive integer');
  if (!(openMs > 0)) throw invalidOptions('openMs', 'a positive number');
  if (!(Number.isInteger(halfOpenCalls) && halfOpenCalls >= 1)) {
    throw invalidOptions('halfOpenCalls', 'a positive integer');
  }
  const now = options.now ?? (() => performance.now());
  const listeners = new Set<(change: CircuitStateChange) => void>();
  /** Outcomes in the window, oldest first: [time, failed]. */
  const outcomes: [number, boolean][] = [];
  let state: CircuitState = 'closed';
  let openedAt = 0;
  let probesOut = 0;
  let probesPassed = 0;

  function move(to: CircuitState, failures = 0, calls = 0): void {
    const change = { from: state, to, at: now(), failures, calls };
    state = to;
    probesOut = 0;
    probesPassed = 0;
    if (to === 'open') openedAt = change.at;
    if (to === 'closed') outcomes.length = 0;
    for (const listener of listeners) listener(change);
  }

  /** Open long enough: half-open. */
  function tick(): void {
    if (state === 'open' && now() - openedAt >= openMs) move('half-open');
  }

  function count(): { calls: number; failures: number } {
    const since = now() - windowMs;
    while (outcomes.length > 0 && outcomes[0]![0] <= since) outcomes.shift();
    let failures = 0;
    for (const [, failed] of outcomes) if (failed) failures += 1;
    return { calls: outcomes.length, failures };
  }

  function settle(failed: boolean): void {
    tick();
    if (state === 'half-open') {
      // Only probes count here; a late outcome of a call started before the breaker opened is not one.
      if (probesOut === 0) return;
      probesOut -= 1;
      if (failed) move('open', 1, 1);
      else if (++probesPassed >= halfOpenCalls) move('closed');
      return;
    }
    // An outcome arriving while open (a call started before it tripped) changes nothing.
    if (state === 'open') return;
    outcomes.push([now(), failed]);
    if (!failed) return;
    const { calls, failures } = count();
    if (calls >= minimumCalls && failures / calls >= failureRatio) move('open', failures, calls);
  }

  const breaker: CircuitBreaker = {
    get state() {
      tick();
      return state;
    },
    tryAcquire() {
      tick();
      if (state === 'closed') return true;
      if (state === 'open' || probesOut + probesPassed >= halfOpenCalls) return false;
      probesOut += 1;
      return true;
    },
    capacity() {
      tick();
      if (state === 'closed') return Number.POSITIVE_INFINITY;
      if (state === 'open') return 0;
      return Math.max(0, halfOpenCalls - probesOut - probesPassed);
    },
    retryInMs() {
      tick();
      return state === 'open' ? Math.max(0, openedAt + openMs - now()) : 0;
    },
    success: () => settle(false),
    failure: () => settle(true),
    release() {
      if (state === 'half-open' && probesOut > 0) probesOut -= 1;
    },
    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return breaker;
}
