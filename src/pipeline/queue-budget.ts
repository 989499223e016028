import type { ClientMessage, TopicMessages } from './messages.ts';

/**
 * What one producer's local queue holds (librdkafka's `queue.buffering.max.messages` and
 * `queue.buffering.max.kbytes`): a message stays in it until its delivery report, and a `produce` past either limit
 * fails at once with `ERR__QUEUE_FULL`. A batch of `maxBatchSize` inputs that fan out to many outputs each can pass it
 * (5000 inputs × 20 outputs against the default 100,000 messages): sent in one go, every retry of that batch would fail
 * the same way and the partition would stick.
 */
export interface QueueLimits {
  messages: number;
  bytes: number;
}

/** librdkafka's defaults: 100,000 messages, 1,048,576 KB. */
const clientDefaults: QueueLimits = { messages: 100_000, bytes: 1_048_576 * 1024 };

function setting(rdkafka: Record<string, unknown> | undefined, name: string): number | undefined {
  const value = Number(rdkafka?.[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The queue's limits as the producer is configured (the client's defaults unless `rdkafka` sets them). */
export function producerQueueLimits(rdkafka: Record<string, unknown> | undefined): QueueLimits {
  const kbytes = setting(rdkafka, 'queue.buffering.max.kbytes');
  return {
    messages: setting(rdkafka, 'queue.buffering.max.messages') ?? clientDefaults.messages,
    bytes: kbytes === undefined ? clientDefaults.bytes : kbytes * 1024,
  };
}

/** A message's weight in the queue: its key, value and headers (librdkafka counts the payload and key). */
export function messageBytes(message: ClientMessage): number {
  let bytes = (message.key?.length ?? 0) + (message.value?.length ?? 0);
  for (const [name, value] of Object.entries(message.headers)) bytes += name.length + value.length;
  return bytes;
}

export interface Chunk {
  topicMessages: TopicMessages[];
  messages: number;
  bytes: number;
}

/**
 * The messages cut, in their order, into chunks of at most half the queue each (the first message of a chunk always
 * goes in it): two chunks fit in the queue at once, one being acknowledged while the next is produced.
 */
export function queueChunks(topicMessages: readonly TopicMessages[], limits: QueueLimits): Chunk[] {
  const most = { messages: Math.max(1, Math.floor(limits.messages / 2)), bytes: Math.max(1, limits.bytes / 2) };
  const chunks: Chunk[] = [];
  let current: Chunk = { topicMessages: [], messages: 0, bytes: 0 };
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const bytes = messageBytes(message);
      if (current.messages > 0 && (current.messages + 1 > most.messages || current.bytes + bytes > most.bytes)) {
        chunks.push(current);
        current = { topicMessages: [], messages: 0, bytes: 0 };
      }
      let last = current.topicMessages.at(-1);
      if (last?.topic !== topic) {
        last = { topic, messages: [] };
        current.topicMessages.push(last);
      }
      last.messages.push(message);
      current.messages += 1;
      current.bytes += bytes;
    }
  }
  if (current.messages > 0) chunks.push(current);
  return chunks;
}

/**
 * The queue's room shared by every send of one pipeline (a window's batches send at once): a chunk waits until what
 * is in flight leaves room for it. A chunk larger than the whole queue (one message past the byte limit) goes alone.
 * First come, first in: a chunk that waits holds back the ones that come after it, or small chunks of other partitions,
 * each taking the room another left, could keep a large one out for as long as they keep coming.
 */
export class QueueBudget {
  #messages = 0;
  #bytes = 0;
  #waiting: { chunk: Pick<Chunk, 'messages' | 'bytes'>; admitted: () => void }[] = [];

  constructor(readonly limits: QueueLimits) {}

  async take(chunk: Pick<Chunk, 'messages' | 'bytes'>): Promise<void> {
    if (this.#waiting.length === 0 && this.#fits(chunk)) {
      this.#add(chunk, 1);
      return;
    }
    await new Promise<void>((admitted) => this.#waiting.push({ chunk, admitted }));
  }

  give(chunk: Pick<Chunk, 'messages' | 'bytes'>): void {
    this.#add(chunk, -1);
    // the room is taken here, in line, before anyone else's take can run
    while (this.#waiting.length > 0 && this.#fits(this.#waiting[0]!.chunk)) {
      const next = this.#waiting.shift()!;
      this.#add(next.chunk, 1);
      next.admitted();
    }
  }

  #add(chunk: Pick<Chunk, 'messages' | 'bytes'>, sign: 1 | -1): void {
    this.#messages += sign * chunk.messages;
    this.#bytes += sign * chunk.bytes;
  }

  #fits(chunk: Pick<Chunk, 'messages' | 'bytes'>): boolean {
    if (this.#messages === 0) return true;
    return this.#messages + chunk.messages <= this.limits.messages && this.#bytes + chunk.bytes <= this.limits.bytes;
  }
}
