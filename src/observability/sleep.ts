/** The longest delay a Node timer takes: a longer one fires after 1 ms (a TimeoutOverflowWarning), not later. */
export const maxTimerMs = 2 ** 31 - 1;

/**
 * Resolves after `ms`, or early (without throwing) when `signal` aborts. A delay past `maxTimerMs` (a backoff cap or
 * an interval of weeks) is waited in turns of at most that, never cut to 1 ms.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const until = Date.now() + ms;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const wait = () => {
      const left = until - Date.now();
      if (!(left > maxTimerMs)) timer = setTimeout(done, left);
      else timer = setTimeout(wait, maxTimerMs);
    };
    wait();
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Exponential backoff with full jitter: a random delay in [0, min(cap, base * 2^(attempt-1))]. */
export function fullJitter(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * ceiling);
}
