/** Thrown at an armed hop: the component that reaches it is dropped (its open transaction dies with it). */
export class Crash extends Error {
  constructor(readonly point: string) {
    super(`crash at ${point}`);
    this.name = 'Crash';
  }
}

/**
 * In-process crash injection for the demo: `arm(point)` makes the next component that reaches `point` throw a
 * `Crash`; the driver sees `took()` and restarts that component from scratch.
 */
export class Crasher {
  #armed: string | undefined;
  #fired: string[] = [];

  arm(point: string): void {
    this.#armed = point;
  }

  get armed(): string | undefined {
    return this.#armed;
  }

  /** The fault injector handed to components. */
  readonly at = (point: string): void => {
    if (this.#armed !== point) return;
    this.#armed = undefined;
    this.#fired.push(point);
    throw new Crash(point);
  };

  /** Crashes that happened since the last call. */
  took(): string[] {
    const fired = this.#fired;
    this.#fired = [];
    return fired;
  }
}
