import type { Event } from '../envelope/event.ts';
import type { Batch, IncomingRecord } from '../transport/port.ts';
import type { Decoded } from './apply.ts';
import type { ConsumerOptions } from './options.ts';
import { dueOf, groupOf, type RetryTopics } from './retry-topics.ts';

export interface Prepared {
  items: Decoded[];
  /** The first record that cannot be decoded (nothing after it is taken). */
  poison: { record: IncomingRecord; error: unknown } | undefined;
  /** On a retry topic, the first record not due yet (nothing after it is taken). */
  waitUntil: { record: IncomingRecord; due: number } | undefined;
  /** The last of another group's records before the first of ours (to move over). */
  others: IncomingRecord | undefined;
}

/**
 * The records of a batch to apply now: decoded, up to the first that cannot be decoded (`poison`) and, on a retry
 * topic, up to the first that is not due yet (`waitUntil`); another group's records in a retry topic are passed over.
 */
export async function prepareBatch(
  batch: Batch,
  context: {
    retryTopics: RetryTopics | undefined;
    group: string;
    decode: (record: IncomingRecord) => Event | Promise<Event>;
    /** A record of a retry topic due further away than that topic's delay (taken now): by how much. */
    onSkew?: (record: IncomingRecord, skewMs: number) => void;
  },
): Promise<Prepared> {
  const { retryTopics, group, decode } = context;
  const retryStage = retryTopics !== undefined && retryTopics.stageOf(batch.topic).stage !== 0;
  const items: Decoded[] = [];
  let poison: Prepared['poison'];
  let waitUntil: Prepared['waitUntil'];
  let others: IncomingRecord | undefined;
  for (const record of batch.records) {
    if (retryStage) {
      if (groupOf(record) !== group) {
        if (items.length === 0) others = record;
        continue;
      }
      const due = dueOf(record);
      const { waitMs, skewMs } = retryTopics.waitOf(batch.topic, due);
      if (skewMs > 0) context.onSkew?.(record, skewMs);
      else if (waitMs > 0) {
        waitUntil = { record, due };
        break;
      }
    }
    try {
      const decoded = decode(record);
      // A synchronous decoder (the default) costs no await per record.
      items.push({ event: isThenable(decoded) ? await decoded : decoded, record });
    } catch (error) {
      poison = { record, error };
      break;
    }
  }
  return { items, poison, waitUntil, others };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}

/** The retry and dead-letter topics of every main topic (created with its partitions, unless told not to). */
export async function createRetryTopics(options: ConsumerOptions, chain: RetryTopics): Promise<string[]> {
  const keepDeadLetters = options.deadLetters ?? true;
  const subscriptions = chain.subscriptions().filter((t) => keepDeadLetters || chain.stageOf(t).stage !== 'dlt');
  if (options.retryTopics?.create === false) return subscriptions;
  const admin = options.transport.admin();
  try {
    for (const main of options.topics) {
      const partitions = (await admin.endOffsets(main)).length || 1;
      const chained = subscriptions.filter((t) => t !== main && chain.stageOf(t).main === main);
      await admin.createTopics(chained.map((topic) => ({ topic, partitions })));
    }
  } finally {
    await admin.close();
  }
  return subscriptions;
}
