import { callBack } from '../observability/callback.ts';
import { type Logger, stderrLogger } from '../observability/logger.ts';
import type { CircuitBreaker, CircuitStateChange } from './circuit-breaker.ts';

/** What `pauseWhileOpen` drives: an `EffectivelyConsumer` (or anything with the same two methods). */
export interface Pausable {
  pause(): void;
  resume(): void;
}

export interface PauseWhileOpenOptions {
  /** Called after the consumers were paused (`paused: true`) or resumed (`paused: false`) (default: none). */
  onChange?: (event: { paused: boolean; change: CircuitStateChange | undefined }) => void;
  /** Where an `onChange` that throws is reported (default: stderr); the consumers stay paused or resumed as told. */
  logger?: Logger;
}

/**
 * The breakers that hold each consumer paused now. A consumer fed into several providers stays paused while ANY of
 * their breakers is open; it is resumed when the last of them half-opens or closes.
 */
const holds = new WeakMap<Pausable, Set<symbol>>();

function hold(consumer: Pausable, token: symbol): void {
  const set = holds.get(consumer) ?? new Set<symbol>();
  holds.set(consumer, set);
  const wasFree = set.size === 0;
  set.add(token);
  if (wasFree) consumer.pause();
}

function release(consumer: Pausable, token: symbol): void {
  const set = holds.get(consumer);
  if (!set?.delete(token)) return;
  if (set.size === 0) consumer.resume();
}

/**
 * Pauses `consumers` (those whose handlers schedule effects for the provider behind `breaker`) while the breaker is
 * open, and resumes them when it half-opens or closes: while the provider is down the backlog stays in the log (the
 * consumer's lag grows, see `consumerLag`) instead of piling up in the effects ledger. Applied at once when the breaker
 * is already open. Returns a function that stops it and releases this breaker's hold (a consumer paused only by it
 * resumes).
 *
 * Several breakers may hold one consumer; do not mix with calling `pause()`/`resume()` on it by hand.
 */
export function pauseWhileOpen(
  breaker: CircuitBreaker,
  consumers: Pausable | readonly Pausable[],
  options: PauseWhileOpenOptions = {},
): () => void {
  const list: readonly Pausable[] = Array.isArray(consumers) ? consumers : [consumers as Pausable];
  const token = Symbol('pauseWhileOpen');
  let paused = false;

  function apply(open: boolean, change: CircuitStateChange | undefined): void {
    if (open === paused) return;
    paused = open;
    for (const consumer of list) {
      if (open) hold(consumer, token);
      else release(consumer, token);
    }
    callBack(options.logger ?? stderrLogger, 'onChange', options.onChange, [{ paused, change }]);
  }

  const unsubscribe = breaker.onStateChange((change) => apply(change.to === 'open', change));
  if (breaker.state === 'open') apply(true, undefined);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    apply(false, undefined);
  };
}
