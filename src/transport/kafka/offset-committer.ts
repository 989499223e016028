import type { TopicPartitionOffset } from '../port.ts';

type Send = (offsets: TopicPartitionOffset[]) => Promise<void>;

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // a caller that drops the promise must not crash the process on a failed commit
  return { promise, resolve, reject };
}

/**
 * Offset commits off the consumer's critical path. `commit` only notes the position (the latest call per partition
 * wins: commits keep their call order, the skipped ones were superseded) and returns at once with a promise of the
 * broker's answer; one request at a time carries everything noted since the last, at most one per `intervalMs`. The
 * caller commits only what its database committed, so nothing sent here is past that position. `flush` sends what is
 * noted now and waits for it: revoke and close call it, so a group's offset is never left behind by a clean stop.
 */
export class OffsetCommitter {
  readonly #send: Send;
  readonly #intervalMs: number;
  readonly #noted = new Map<string, TopicPartitionOffset>();
  #next = deferred();
  #sending: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastSentAt = Number.NEGATIVE_INFINITY;

  constructor(send: Send, intervalMs: number) {
    this.#send = send;
    this.#intervalMs = intervalMs;
  }

  /** Notes the positions; resolves once a commit carrying them (or later positions of their partitions) succeeded. */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    for (const { topic, partition, offset } of offsets)
      this.#noted.set(`${topic}\u0000${partition}`, { topic, partition, offset });
    const answer = this.#next.promise;
    this.#schedule();
    return answer;
  }

  /** Positions noted and not yet sent (for tests and metrics). */
  get pending(): number {
    return this.#noted.size;
  }

  /** Sends everything noted now (after the request in flight) and waits for the broker; rejects if that commit failed. */
  async flush(): Promise<void> {
    while (this.#sending !== undefined || this.#noted.size > 0) {
      if (this.#sending !== undefined) {
        await this.#sending;
        continue;
      }
      clearTimeout(this.#timer);
      this.#timer = undefined;
      await this.#sendNoted();
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#sending !== undefined || this.#noted.size === 0) return;
    const wait = Math.max(0, this.#lastSentAt + this.#intervalMs - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // A flush may have sent meanwhile: one request at a time, so commits reach the broker in call order.
      if (this.#sending !== undefined || this.#noted.size === 0) return;
      this.#sendNoted().catch(() => undefined); // the callers hold the answer
    }, wait);
    this.#timer.unref();
  }

  async #sendNoted(): Promise<void> {
    const offsets = [...this.#noted.values()];
    this.#noted.clear();
    const answer = this.#next;
    this.#next = deferred();
    this.#lastSentAt = performance.now();
    const sending = this.#send(offsets).then(answer.resolve, answer.reject);
    this.#sending = sending;
    try {
      await sending;
    } finally {
      this.#sending = undefined;
      this.#schedule();
    }
    return answer.promise;
  }
}
