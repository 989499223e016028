import type { ClientConsumer, ClientProducer } from './clients.ts';
import { type BatchWrite, commitTransaction, sendAll, step } from './commit.ts';
import type { QueueBudget } from './queue-budget.ts';
import type { PipelineFaultInjector } from './types.ts';

/** A window's transaction failed; `ownSend` is set on the member whose own send failed (a refusal to bisect alone). */
export class WindowFailed extends Error {
  constructor(
    override readonly cause: unknown,
    readonly ownSend: boolean,
    /** How the window's transaction was ended (`end`'s answer). */
    readonly action: string | undefined,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

interface Member {
  next: BatchWrite['next'];
  sent: Promise<void>;
}

interface Window {
  members: Member[];
  accepting: boolean;
  ready: Promise<void>;
  /** Settles when the window's transaction committed (resolved) or failed and was ended (rejected). */
  done: Promise<void>;
  action?: string;
  /** Members whose send settled; when all have and none joined meanwhile, the window closes before its interval. */
  settled: number;
  closeNow: () => void;
}

export interface WindowDeps {
  producer: () => ClientProducer;
  consumer: ClientConsumer;
  intervalMs: number;
  /** The producer queue's room, shared with every send of the pipeline. */
  budget: QueueBudget;
  faults: PipelineFaultInjector | undefined;
  /** Ends a transaction that failed (abort, or a new producer when it cannot abort): once per window; how. */
  end: (error: unknown) => Promise<string>;
  /** The window committed, with `members` batches in it. */
  committed: (members: number) => void;
}

/**
 * One Kafka transaction over the batches of several partitions (docs/transactions.md, "What a transaction costs"):
 * the first batch to join begins it, each batch sends its outputs into it and waits; the window closes once every batch
 * that joined has sent and no other came (the client hands a fetch's batches at once), or `intervalMs` after the begin
 * at the latest: every send settled, one `sendOffsets` carries every joined partition's next position, one commit ends
 * it, and every batch returns (so the client never moves past an input whose transaction is open, and a revoke waits).
 * A failure fails every batch of the window: each rewinds its partition to the committed offset. Windows and the
 * transactions a batch runs alone (`alone`, for a bisection) take turns on the one transactional producer.
 */
export class TransactionWindows {
  readonly #deps: WindowDeps;
  #open: Window | undefined;
  /** Settles when the last window or lone transaction queued is over: the next one starts after it. */
  #turn: Promise<void> = Promise.resolve();

  constructor(deps: WindowDeps) {
    this.#deps = deps;
  }

  /** Sends `write`'s outputs in the open window (or a new one) and resolves once that window committed. */
  async join(write: BatchWrite): Promise<void> {
    const window = this.#open?.accepting ? this.#open : this.#begin();
    let began = false;
    const sent = window.ready.then(async () => {
      began = true;
      if (write.topicMessages.length > 0)
        await step('send', () => sendAll(this.#deps.producer(), write.topicMessages, this.#deps.budget));
      await this.#deps.faults?.('pipeline:after-send');
    });
    window.members.push({ next: write.next, sent });
    const quiet = () => this.#settledOne(window);
    sent.then(quiet, quiet);
    try {
      await sent;
    } catch (error) {
      await window.done.catch(() => undefined);
      throw new WindowFailed(error, began, window.action);
    }
    try {
      await window.done;
    } catch (error) {
      throw new WindowFailed(error, false, window.action);
    }
  }

  /** Runs `work` (transactions of its own) when no window is open, and no window opens until it is over. */
  async alone<T>(work: () => Promise<T>): Promise<T> {
    const before = this.#turn;
    let over = () => {};
    this.#turn = new Promise<void>((resolve) => {
      over = resolve;
    });
    await before;
    try {
      return await work();
    } finally {
      over();
    }
  }

  #begin(): Window {
    const before = this.#turn;
    const ready = before.then(() =>
      step('begin', async () => {
        await this.#deps.producer().transaction();
      }),
    );
    const window: Window = {
      members: [],
      accepting: true,
      ready,
      done: Promise.resolve(),
      settled: 0,
      closeNow: () => {},
    };
    const due = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.#deps.intervalMs);
      window.closeNow = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    window.done = ready.then(
      () => due.then(() => this.#close(window)),
      async (error: unknown) => {
        window.accepting = false;
        window.action = await this.#deps.end(error);
        throw error;
      },
    );
    // a failed window is ended in #close (or never began); the next one waits only for it to be over
    this.#turn = window.done.catch(() => undefined);
    window.done.catch(() => undefined);
    this.#open = window;
    return window;
  }

  /**
   * The client hands a fetch's batches (one per partition) at once: once every batch that joined has sent and a turn
   * of the event loop brought no other, the window closes without waiting out its interval.
   */
  #settledOne(window: Window): void {
    window.settled += 1;
    const members = window.members.length;
    if (window.settled < members) return;
    setImmediate(() => {
      if (window.accepting && window.members.length === members) window.closeNow();
    });
  }

  async #close(window: Window): Promise<void> {
    window.accepting = false;
    if (this.#open === window) this.#open = undefined;
    try {
      const sends = await Promise.allSettled(window.members.map((member) => member.sent));
      const failed = sends.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
      const topics = new Map<string, { partition: number; offset: string }[]>();
      for (const { next } of window.members) {
        const partitions = topics.get(next.topic) ?? [];
        topics.set(next.topic, partitions);
        partitions.push({ partition: next.partition, offset: next.offset });
      }
      // the consumer's group metadata (member id, generation): a zombie's offsets are refused (KIP-447)
      await step('send-offsets', () =>
        this.#deps.producer().sendOffsets({
          consumer: this.#deps.consumer,
          topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
        }),
      );
      await this.#deps.faults?.('pipeline:after-send-offsets');
      await commitTransaction(this.#deps.producer(), this.#deps.faults);
      this.#deps.committed(window.members.length);
    } catch (error) {
      window.action = await this.#deps.end(error);
      throw error;
    }
  }
}
