import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { TopicPartitionOffset } from '../port.ts';
import { partitionId } from '../position.ts';

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
 * wins: commits keep their call order, the skipped ones were superseded) and returns at once; one request at a time
 * carries everything noted since the last, at most one per `intervalMs`. The caller commits only what its database
 * committed, so nothing sent here is past that position. `flush` sends what is noted now: revoke and close call it.
 *
 * What "sent" means (measured, see docs/kafka.md): the Confluent client's `commitOffsets` resolves once librdkafka
 * has QUEUED the commit (commitAsync), not on the broker's answer — a refused commit (fenced member, stale generation)
 * resolves too. The ordering on revoke and close comes from librdkafka itself: it finishes outstanding commits before
 * an assignment change completes and before its consumer closes. The broker's real answer comes later (the client's
 * offset commit callback): `refused` notes a refused position again, so it goes out with the next request (with
 * `cooperative-sticky`, commits sent while a rebalance is under way are refused; on a partition that then stays idle
 * nothing else would carry its position). A position never goes out again once a newer one of its partition was noted
 * or sent, or once its partition was discarded (given up). Any other lost commit only means a redelivery, which dedup
 * absorbs.
 */
export class OffsetCommitter {
  readonly #send: Send;
  readonly #intervalMs: number;
  readonly #noted = new Map<string, TopicPartitionOffset>();
  /** The last position sent per partition (until discarded): only that one is noted again when refused. */
  readonly #sent = new Map<string, string>();
  #next = deferred();
  #sending: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastSentAt = Number.NEGATIVE_INFINITY;

  constructor(send: Send, intervalMs: number) {
    this.#send = send;
    this.#intervalMs = intervalMs;
  }

  /** Notes the positions; resolves once a commit carrying them (or later positions of their partitions) was queued. */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    for (const { topic, partition, offset } of offsets)
      this.#noted.set(partitionId({ topic, partition }), { topic, partition, offset });
    const answer = this.#next.promise;
    this.#schedule();
    return answer;
  }

  /**
   * A consumer's `commit`: only the positions of partitions it still `holds` are noted (a revoked partition's position
   * is its new owner's to commit); a failed commit rejects with a retryable `EFF_TRANSPORT`.
   */
  commitHeld(offsets: readonly TopicPartitionOffset[], holds: (partition: string) => boolean): Promise<void> {
    const held = offsets.filter((tp) => holds(partitionId(tp)));
    if (held.length === 0) return Promise.resolve();
    return this.commit(held).catch((error: unknown) => {
      throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `offset commit failed: ${(error as Error).message}`, {
        retryable: true,
        cause: error,
      });
    });
  }

  /**
   * The broker refused these positions (sent earlier, `commit` resolved): each is noted again and goes out with the
   * next request, unless its partition has a newer position noted or sent since, or was discarded. The caller passes
   * only partitions it still holds. Returns how many were noted again.
   */
  refused(offsets: readonly { topic: string; partition: number; offset: string }[]): number {
    let again = 0;
    for (const { topic, partition, offset } of offsets) {
      const key = partitionId({ topic, partition });
      if (this.#noted.has(key) || this.#sent.get(key) !== offset) continue;
      this.#noted.set(key, { topic, partition, offset });
      again++;
    }
    if (again > 0) this.#schedule();
    return again;
  }

  /** Positions noted and not yet sent (for tests and metrics). */
  get pending(): number {
    return this.#noted.size;
  }

  /**
   * Forgets noted positions (of `partitions`, or all): they will not be sent. For partitions this member no longer
   * holds: a late send would land in the next generation and move the group's offset back. Costs a redelivery dedup
   * absorbs.
   */
  discard(partitions?: readonly { topic: string; partition: number }[]): void {
    if (partitions === undefined) {
      this.#noted.clear();
      this.#sent.clear();
    } else
      for (const tp of partitions) {
        this.#noted.delete(partitionId(tp));
        this.#sent.delete(partitionId(tp));
      }
  }

  /** Sends everything noted now (after the request in flight) and waits until the client took it (queued). */
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
      this.#sendNoted().catch(() => undefined); // the callers hold the client's answer
    }, wait);
    this.#timer.unref();
  }

  async #sendNoted(): Promise<void> {
    const offsets = [...this.#noted.values()];
    this.#noted.clear();
    for (const tp of offsets) this.#sent.set(partitionId(tp), tp.offset);
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
