import { ErrorCodes } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import type { TopicPartitionOffset } from '../port.ts';
import { partitionId } from '../position.ts';

export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/**
 * The positions this consumer sent in offset commits that the broker has not yet confirmed (the last one per
 * partition): what a close that timed out leaves uncommitted. Fed by the sends and by the broker's answers
 * (librdkafka's offset commit callback).
 */
export class UnansweredCommits {
  readonly #sent = new Map<string, TopicPartitionOffset>();

  sent(offsets: readonly TopicPartitionOffset[]): void {
    for (const tp of offsets) this.#sent.set(partitionId(tp), tp);
  }

  /** The broker's answer: positions it stored are no longer outstanding; refused ones stay. */
  answered(refused: boolean, offsets: readonly { topic: string; partition: number; offset: number | string }[]): void {
    if (refused) return;
    for (const tp of offsets) {
      const key = partitionId(tp);
      if (this.#sent.get(key)?.offset === String(tp.offset)) this.#sent.delete(key);
    }
  }

  list(): TopicPartitionOffset[] {
    return [...this.#sent.values()];
  }
}

/**
 * Waits for the client's disconnect at most `timeoutMs`. librdkafka's consumer close waits for every queued offset
 * commit until the group coordinator answers, and a coordinator that does not answer (a frozen broker, a network
 * partition) would hold `close()` for as long. Past the bound, an `EFF_CLOSE_TIMEOUT` warning names the positions sent
 * and never confirmed (those records will be redelivered; dedup absorbs them) and the close is forced: `close()`
 * returns, and the client finishes its own close in the background (its worker thread keeps the process alive until
 * the coordinator answers or the request fails, and `process.exit()` waits for it too: Node joins libuv's worker
 * threads at exit; a process that must end now ends by a signal).
 */
export async function disconnectWithin(
  disconnect: Promise<void>,
  options: { timeoutMs: number; group: string; logger: Logger; uncommitted: () => TopicPartitionOffset[] },
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<true>((resolve) => {
    timer = setTimeout(() => resolve(true), options.timeoutMs);
    timer.unref();
  });
  // A disconnect failing before the bound is close()'s error; after the forced close it is nobody's to handle.
  disconnect.catch(() => undefined);
  try {
    if (!(await Promise.race([disconnect.then(() => false as const), timedOut]))) return;
  } finally {
    clearTimeout(timer);
  }
  const uncommitted = options.uncommitted().map(({ topic, partition, offset }) => `${topic}[${partition}]@${offset}`);
  options.logger.warn(
    `consumer close timed out after ${options.timeoutMs} ms: the group coordinator did not answer; closing without ` +
      `waiting (uncommitted: ${uncommitted.length === 0 ? 'none' : uncommitted.join(', ')}; redelivered, deduplicated)`,
    { code: ErrorCodes.EFF_CLOSE_TIMEOUT, group: options.group, timeoutMs: options.timeoutMs, uncommitted },
  );
}
