import { EffectivelyError, ErrorCodes } from '../errors.ts';
import { errorFields } from '../observability/logger.ts';
import { sleep } from '../observability/sleep.ts';
import { recordsOf } from '../transport/kafka/headers.ts';
import { errorCode, errorCodeName, txnErrorKind } from '../transport/kafka/txn-errors.ts';
import { partitionId } from '../transport/position.ts';
import { type Bisecting, commitBisecting, refusalOf } from './bisect.ts';
import { type ClientProducer, pipelineConsumer, pipelineKafka, pipelineProducer } from './clients.ts';
import { commitAtLeastOnce, commitExactlyOnce, StepError } from './commit.ts';
import { byTopic } from './messages.ts';
import { resolveOptions } from './options.ts';
import { producerQueueLimits, QueueBudget } from './queue-budget.ts';
import { rewind } from './rewind.ts';
import { type Part, transformBatch } from './transform.ts';
import type { Pipeline, PipelineFailure, PipelineOptions, PipelineRecord, PipelineStats } from './types.ts';
import { TransactionWindows, WindowFailed } from './window.ts';

/** Partitions whose batches one window's transaction can hold (`commitIntervalMs`): the client's batches in flight. */
const WINDOW_PARTITIONS = 16;

/**
 * Kafka → transform → Kafka, exactly once: each polled batch (one partition's) is one Kafka transaction holding its
 * outputs, its dead letters and the input offsets (last + 1, with the consumer group's metadata), committed together.
 * An abortable failure aborts and rewinds the partition to the group's committed offset; a fatal one (fenced, a
 * failed abort) replaces the producer first. Readers of the outputs must be read_committed.
 */
export function createPipeline(options: PipelineOptions): Pipeline {
  const settings = resolveOptions(options);
  const exactlyOnce = settings.guarantee === 'exactly-once';
  const kafka = pipelineKafka(settings);
  const consumer = pipelineConsumer(kafka, settings);
  let producer: ClientProducer = pipelineProducer(kafka, settings);
  const stats: PipelineStats = {
    committedInputs: 0,
    outputs: 0,
    deadLettered: 0,
    transactions: 0,
    aborted: 0,
    producersRecreated: 0,
  };
  /** The first offset read from each partition since start: where to go back to while nothing is committed. */
  const firstOffsets = new Map<string, string>();
  /**
   * Per partition, its failed batches in a row: its retry waits longer each time (an outage, a missing topic), up to
   * 5 s. Per partition, so another partition's success does not reset it into a hot loop.
   */
  const failuresInRow = new Map<string, number>();
  /** The producer's local queue (replaced producers are configured alike): every send takes its room from it. */
  const sending = { budget: new QueueBudget(producerQueueLimits(settings.kafka.rdkafka)), faults: settings.faults };
  const windows =
    exactlyOnce && settings.commitIntervalMs > 0
      ? new TransactionWindows({
          producer: () => producer,
          consumer,
          intervalMs: settings.commitIntervalMs,
          budget: sending.budget,
          faults: settings.faults,
          end: (error) => endFailed(error instanceof StepError ? error.cause : error),
          committed: () => {
            stats.transactions += 1;
          },
        })
      : undefined;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const stopped = () => closing !== undefined;

  async function connectProducer(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await producer.connect();
        return;
      } catch (error) {
        if (stopped()) throw error;
        settings.logger.warn('pipeline: producer connect failed, retrying', { ...errorFields(error), attempt });
        await producer.disconnect().catch(() => undefined);
        producer = pipelineProducer(kafka, settings);
        await sleep(Math.min(5000, 200 * 2 ** attempt));
      }
    }
  }

  /** A producer in a fatal state (fenced, or its abort failed) cannot be used again: a new one, same id. */
  async function replaceProducer(): Promise<void> {
    const old = producer;
    await old.disconnect().catch(() => undefined);
    producer = pipelineProducer(kafka, settings);
    stats.producersRecreated += 1;
    await connectProducer();
  }

  /** Ends a transaction that failed: an abort, or a new producer when it cannot abort (fenced, a failed abort). */
  async function endFailed(cause: unknown): Promise<PipelineFailure['action']> {
    let action: PipelineFailure['action'] = 'aborted';
    if (exactlyOnce) {
      if (txnErrorKind(cause) === 'abortable' && producer.isActive()) {
        await producer.abort().catch(() => {
          action = 'recreated';
        });
      } else if (producer.isActive() || txnErrorKind(cause) === 'fatal') {
        action = 'recreated';
      }
      if (action === 'recreated') await replaceProducer();
    }
    return action;
  }

  async function recover(
    error: unknown,
    position: { topic: string; partition: number; firstOffset: string },
    ended?: PipelineFailure['action'],
  ) {
    const cause = error instanceof StepError ? error.cause : error;
    const code = errorCode(cause);
    const action = ended ?? (await endFailed(cause));
    stats.aborted += 1;
    const failure: PipelineFailure = {
      action,
      code,
      codeName: errorCodeName(code),
      message: cause instanceof Error ? cause.message : String(cause),
      step: error instanceof StepError ? error.step : 'send',
    };
    settings.logger.warn('pipeline: batch not committed, rewinding', { ...failure, ...position });
    try {
      settings.onFailure(failure);
    } catch (callbackError) {
      settings.logger.error('pipeline: onFailure threw', errorFields(callbackError));
    }
    const key = partitionId(position);
    const failures = (failuresInRow.get(key) ?? 0) + 1;
    failuresInRow.set(key, failures);
    if (failures > 1) await sleep(Math.min(5000, 100 * 2 ** (failures - 2)));
    await rewind(consumer, position, stopped);
  }

  /** One partition's batch: its transactions (one, or more when a refusal of one input is bisected). */
  function bisecting(resolveOffset: (offset: string) => void): Bisecting {
    return {
      settings,
      logger: settings.logger,
      commit: (parts: Part[]) => {
        const last = parts.at(-1)!.record;
        const next = { topic: last.topic, partition: last.partition, offset: String(BigInt(last.offset) + 1n) };
        const write = { topicMessages: byTopic(parts.flatMap((part) => part.items)), next };
        return (exactlyOnce ? commitExactlyOnce : commitAtLeastOnce)(producer, consumer, write, sending);
      },
      abort: async () => {
        if (!exactlyOnce || !producer.isActive()) return;
        await producer.abort().catch(() => replaceProducer());
      },
      committed: (parts: Part[], ownTransaction = true) => {
        resolveOffset(parts.at(-1)!.record.offset);
        if (ownTransaction) stats.transactions += 1;
        stats.committedInputs += parts.length;
        for (const part of parts) {
          if (part.letter) stats.deadLettered += 1;
          else stats.outputs += part.items.length;
        }
      },
    };
  }

  async function handleBatch(records: PipelineRecord[], resolveOffset: (offset: string) => void) {
    const first = records[0];
    if (!first) return;
    const key = partitionId(first);
    if (!firstOffsets.has(key)) firstOffsets.set(key, first.offset);
    const position = { topic: first.topic, partition: first.partition, firstOffset: firstOffsets.get(key)! };
    try {
      const parts = await transformBatch(settings, records);
      if (windows) await inWindow(windows, parts, resolveOffset, position);
      else await commitBisecting(bisecting(resolveOffset), parts);
      failuresInRow.delete(key);
    } catch (error) {
      if (error instanceof WindowFailed)
        await recover(error.cause, position, error.action as PipelineFailure['action']);
      else await recover(error, position);
    }
  }

  /**
   * A batch in the open window's transaction. A record of its own refused: the window is over (aborted), and the batch
   * is committed alone, bisected in transactions of its own (no window opens meanwhile).
   */
  async function inWindow(
    on: TransactionWindows,
    parts: Part[],
    resolveOffset: (offset: string) => void,
    position: { topic: string; partition: number; firstOffset: string },
  ) {
    const last = parts.at(-1)!.record;
    const next = { topic: last.topic, partition: last.partition, offset: String(BigInt(last.offset) + 1n) };
    try {
      await on.join({ topicMessages: byTopic(parts.flatMap((part) => part.items)), next });
    } catch (error) {
      if (!(error instanceof WindowFailed && error.ownSend && refusalOf(error.cause))) throw error;
      await on.alone(async () => {
        try {
          await commitBisecting(bisecting(resolveOffset), parts);
        } catch (alone) {
          await recover(alone, position);
        }
      });
      return;
    }
    bisecting(resolveOffset).committed(parts, false);
  }

  /** Starts the client's loop and returns (the loop runs until the consumer disconnects). */
  async function run(): Promise<void> {
    await consumer.run({
      eachBatchAutoResolve: false,
      // one transactional producer has one transaction open: one batch at a time, or a window's batches together
      partitionsConsumedConcurrently: windows ? WINDOW_PARTITIONS : 1,
      eachBatch: async ({ batch, resolveOffset }) => {
        // Closing: nothing is resolved, so the client does not move past this batch; the next owner reads it.
        if (stopped()) return;
        const records: PipelineRecord[] = recordsOf(batch);
        await handleBatch(records, resolveOffset);
      },
    });
  }

  const pipeline: Pipeline = {
    start() {
      if (closing) return Promise.reject(new EffectivelyError(ErrorCodes.EFF_CLOSED, 'pipeline is closed'));
      starting ??= (async () => {
        // The producer first: its initTransactions fences our previous incarnation and ends its open transaction,
        // so the offsets it left pending are settled before the consumer asks for them.
        await connectProducer();
        await consumer.connect();
        await consumer.subscribe({ topics: settings.from });
        await run();
      })();
      return starting;
    },
    close() {
      closing ??= (async () => {
        await starting?.catch(() => undefined);
        await consumer.disconnect().catch(() => undefined);
        await producer.disconnect().catch(() => undefined);
      })();
      return closing;
    },
    stats: () => ({ ...stats }),
    [Symbol.asyncDispose]: () => pipeline.close(),
  };
  return pipeline;
}
