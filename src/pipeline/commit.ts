import { isRetriableCommit } from '../transport/kafka/txn-errors.ts';
import type { ClientConsumer, ClientProducer } from './clients.ts';
import type { TopicMessages } from './messages.ts';
import { type QueueBudget, queueChunks } from './queue-budget.ts';
import { causeOf } from './refusals.ts';
import type { PipelineFailure, PipelineFaultInjector } from './types.ts';

export interface BatchWrite {
  topicMessages: TopicMessages[];
  /** The input position after the batch: the last offset + 1 (the client's own EOS example forgets the + 1). */
  next: { topic: string; partition: number; offset: string };
}

/** Tags an error with the step it came from, so the failure report names it. */
export class StepError extends Error {
  constructor(
    readonly step: PipelineFailure['step'],
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

export async function step<T>(name: PipelineFailure['step'], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new StepError(name, error);
  }
}

const commitTries = 3;
/** How long the other delivery reports of a send are awaited once one failed (see sendAll). */
const failureGraceMs = 2000;

/** What a batch's sends share: the producer queue's room, and the test's fault points. */
export interface Sending {
  budget: QueueBudget;
  faults: PipelineFaultInjector | undefined;
}

/**
 * Sends every message in chunks that fit the producer's local queue (queue-budget.ts), each chunk acknowledged before
 * the next is produced; throws the first chunk's failure (the later chunks are not sent: the transaction is aborted).
 */
export async function sendAll(
  producer: ClientProducer,
  topicMessages: TopicMessages[],
  budget: QueueBudget,
): Promise<void> {
  for (const chunk of queueChunks(topicMessages, budget.limits)) {
    await budget.take(chunk);
    try {
      await sendChunk(producer, chunk.topicMessages);
    } finally {
      budget.give(chunk);
    }
  }
}

/**
 * Sends every message, one client `send` each (the same produce calls, in the same order, as one `sendBatch`), and
 * waits for every delivery report: a failed send throws the report that says why (a record's refusal), where
 * `sendBatch` rejects with the first report to come, often another record's `ERR__PURGE_QUEUE`. Once one report
 * failed, the others are awaited for `failureGraceMs` only: after a refused record the idempotent producer can hold the
 * records behind it (a sequence gap) until `message.timeout.ms` (minutes), and only the abort that follows frees them
 * (seen on the real broker: a batch after a topic's refusal stuck with no report for 40 s and more).
 */
async function sendChunk(producer: ClientProducer, topicMessages: TopicMessages[]): Promise<void> {
  const errors: unknown[] = [];
  let failed = () => {};
  const firstFailure = new Promise<void>((resolve) => {
    failed = resolve;
  });
  const sends = topicMessages.flatMap(({ topic, messages }) =>
    // A copy: the client's send rewrites the message it is given (headers, partition), and a bisection sends it again.
    messages.map((message) =>
      producer.send({ topic, messages: [{ ...message }] }).then(
        () => undefined,
        (error: unknown) => {
          errors.push(error);
          failed();
        },
      ),
    ),
  );
  const all = Promise.all(sends);
  let grace: NodeJS.Timeout | undefined;
  const afterFailure = firstFailure.then(
    () =>
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, failureGraceMs);
      }),
  );
  await Promise.race([all, afterFailure]);
  clearTimeout(grace);
  if (errors.length > 0) throw causeOf([...errors]);
}

/** One Kafka transaction: outputs (and dead letters), then the input offsets with the group's metadata, then commit. */
export async function commitExactlyOnce(
  producer: ClientProducer,
  consumer: ClientConsumer,
  write: BatchWrite,
  { budget, faults }: Sending,
): Promise<void> {
  await step('begin', () => producer.transaction());
  if (write.topicMessages.length > 0) await step('send', () => sendAll(producer, write.topicMessages, budget));
  await faults?.('pipeline:after-send');
  const { topic, partition, offset } = write.next;
  // `consumer` (not a group id): the client passes the consumer's group metadata (member id, generation, instance
  // id), so a zombie whose generation is gone cannot commit offsets (KIP-447).
  await step('send-offsets', () =>
    producer.sendOffsets({ consumer, topics: [{ topic, partitions: [{ partition, offset }] }] }),
  );
  await faults?.('pipeline:after-send-offsets');
  await commitTransaction(producer, faults);
}

/** `commit()` of the open transaction, asked again when it timed out (librdkafka resumes the same commit). */
export async function commitTransaction(
  producer: ClientProducer,
  faults: PipelineFaultInjector | undefined,
): Promise<void> {
  await step('commit', async () => {
    for (let attempt = 1; ; attempt++) {
      const commit = producer.commit();
      if (attempt === 1) {
        commit.catch(() => undefined); // handled below; the hook may take time
        await faults?.('pipeline:during-commit');
      }
      try {
        return await commit;
      } catch (error) {
        // A commit that timed out is asked again (librdkafka resumes the same commit); other errors are the caller's.
        if (attempt >= commitTries || !isRetriableCommit(error)) throw error;
      }
    }
  });
}

/** The naive way: send the outputs, then commit the offsets. A crash between the two writes the outputs twice. */
export async function commitAtLeastOnce(
  producer: ClientProducer,
  consumer: ClientConsumer,
  write: BatchWrite,
  { budget, faults }: Sending,
): Promise<void> {
  if (write.topicMessages.length > 0) await step('send', () => sendAll(producer, write.topicMessages, budget));
  await faults?.('pipeline:after-send');
  const commit = consumer.commitOffsets([write.next]);
  commit.catch(() => undefined);
  await faults?.('pipeline:during-commit');
  await step('commit', () => commit);
  await faults?.('pipeline:after-send-offsets');
}
