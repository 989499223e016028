/**
 * A bounded pool of batch slots shared by a member's partition workers: at most `size` batches in flight at once,
 * handed out first come, first served. A waiter whose signal aborts (its partition revoked or lost, the member closing)
 * leaves the queue without a slot.
 */
export class Slots {
  #free: number;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves with a release function once a slot is free, or undefined when `signal` aborts first. */
  take(signal: AbortSignal): Promise<(() => void) | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#releaser());
        },
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        resolve(undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next.grant();
      else this.#free += 1;
    };
  }
}
