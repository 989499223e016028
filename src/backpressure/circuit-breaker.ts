import { invalidOptions } from '../errors.ts';
import { callBack } from '../observability/callback.ts';
import { type Logger, stderrLogger } from '../observability/logger.ts';

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
  /** Where a state-change listener that throws is reported (default: stderr); the move and the other listeners stand. */
  logger?: Logger;
}

/** One call's permission: report its outcome once (a second report is ignored). */
export interface CircuitPermit {
  /** True when this call is a half-open probe: its outcome decides whether the breaker closes. */
  readonly probe: boolean;
  success(): void;
  failure(): void;
  /** Given back unused (the call was not made): counts neither way. */
  release(): void;
}

/**
 * Closed: calls go through and their outcomes are counted over a sliding window. Open (the failure ratio reached with
 * at least `minimumCalls`): no call goes through for `openMs`. Half-open: `halfOpenCalls` probes go through; their
 * success closes it, a failure opens it again. It holds no timer: it moves from open to half-open when asked.
 */
export interface CircuitBreaker {
  readonly state: CircuitState;
  /**
   * Asks to make one call: a permit to report the call's outcome on, or `undefined` (wait). Exact: only a probe's
   * own permit decides a half-open breaker, whatever order late answers of earlier calls come in.
   */
  acquire(): CircuitPermit | undefined;
  /**
   * Asks to make one call: true (report it with `success`, `failure` or `release`) or false (wait). These anonymous
   * reports settle the oldest outstanding call first; when calls answer out of order prefer `acquire`.
   */
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
  /** How many entries the sliding window holds now (at most about 1,000, whatever the call rate). */
  windowEntries(): number;
}

/** A slice of the window: the outcomes of calls that ended within `windowMs / 1000` of `at`. */
interface Slice {
  at: number;
  calls: number;
  failures: number;
}

/** Slices per window: the window's memory and the cost of pruning it are bounded by this, not by the call rate. */
const slicesPerWindow = 1000;

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
  const logger = options.logger ?? stderrLogger;
  const sliceMs = windowMs / slicesPerWindow;
  const listeners = new Set<(change: CircuitStateChange) => void>();
  /** Outcomes in the window, oldest first, grouped in slices, with running totals. */
  const window: Slice[] = [];
  let windowCalls = 0;
  let windowFailures = 0;
  let state: CircuitState = 'closed';
  let openedAt = 0;
  /** Which half-open period a probe belongs to: a probe of an earlier one is late. */
  let halfOpenRound = 0;
  let probesOut = 0;
  let probesPassed = 0;
  /** Permits of the anonymous API (`tryAcquire` and friends), oldest first. */
  const anonymous: CircuitPermit[] = [];

  function clearWindow(): void {
    window.length = 0;
    windowCalls = 0;
    windowFailures = 0;
  }

  function move(to: CircuitState, failures = 0, calls = 0): void {
    const change = { from: state, to, at: now(), failures, calls };
    state = to;
    probesOut = 0;
    probesPassed = 0;
    if (to === 'open') openedAt = change.at;
    if (to === 'half-open') halfOpenRound += 1;
    if (to === 'closed') clearWindow();
    for (const listener of listeners) callBack(logger, 'onStateChange', listener, [change], { to });
  }

  /** Open long enough: half-open. */
  function tick(): void {
    if (state === 'open' && now() - openedAt >= openMs) move('half-open');
  }

  function prune(at: number): void {
    const since = at - windowMs;
    while (window.length > 0 && window[0]!.at <= since) {
      const gone = window.shift()!;
      windowCalls -= gone.calls;
      windowFailures -= gone.failures;
    }
  }

  function record(failed: boolean): void {
    const at = now();
    prune(at);
    let last = window.at(-1);
    if (last === undefined || at - last.at >= sliceMs) {
      last = { at, calls: 0, failures: 0 };
      window.push(last);
    }
    last.calls += 1;
    windowCalls += 1;
    if (failed) {
      last.failures += 1;
      windowFailures += 1;
    }
  }

  function settle(probeOf: number | undefined, failed: boolean): void {
    tick();
    if (probeOf !== undefined) {
      // A probe of an earlier half-open period (the breaker opened again meanwhile) decides nothing now.
      if (state !== 'half-open' || probeOf !== halfOpenRound) return;
      probesOut -= 1;
      if (failed) move('open', 1, 1);
      else if (++probesPassed >= halfOpenCalls) move('closed');
      return;
    }
    // A call let through while closed that answers while open or half-open changes nothing: it is no probe.
    if (state !== 'closed') return;
    record(failed);
    if (failed && windowCalls >= minimumCalls && windowFailures / windowCalls >= failureRatio) {
      move('open', windowFailures, windowCalls);
    }
  }

  function acquire(): CircuitPermit | undefined {
    tick();
    if (state === 'open') return undefined;
    if (state === 'half-open' && probesOut + probesPassed >= halfOpenCalls) return undefined;
    const probeOf = state === 'half-open' ? halfOpenRound : undefined;
    if (probeOf !== undefined) probesOut += 1;
    let settled = false;
    const once = (then: () => void) => () => {
      if (settled) return;
      settled = true;
      then();
    };
    return {
      probe: probeOf !== undefined,
      success: once(() => settle(probeOf, false)),
      failure: once(() => settle(probeOf, true)),
      release: once(() => {
        if (probeOf !== undefined && state === 'half-open' && probeOf === halfOpenRound) probesOut -= 1;
      }),
    };
  }

  /** The anonymous API settles the oldest non-probe call first, then the probes (calls mostly end in order). */
  function oldestAnonymous(): CircuitPermit | undefined {
    const index = anonymous.findIndex((permit) => !permit.probe);
    return anonymous.splice(index === -1 ? 0 : index, 1)[0];
  }

  const breaker: CircuitBreaker = {
    get state() {
      tick();
      return state;
    },
    acquire,
    tryAcquire() {
      const permit = acquire();
      if (permit) anonymous.push(permit);
      return permit !== undefined;
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
    success: () => oldestAnonymous()?.success(),
    failure: () => oldestAnonymous()?.failure(),
    release: () => {
      // the permit given back is the newest one (acquired and not used)
      anonymous.pop()?.release();
    },
    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    windowEntries: () => window.length,
  };
  return breaker;
}
