import { loadSql } from '../db/sql.ts';
import { deadLetterStore } from '../deadletter/store.ts';
import { decodeEvent, eventKeyOfRecord } from '../envelope/cloudevents.ts';
import { errorFields } from '../observability/logger.ts';
import { systemOf } from '../observability/semconv.ts';
import type { BatchHandler, TopicPartition } from '../transport/port.ts';
import { partitionId } from '../transport/position.ts';
import { createApplier } from './apply.ts';
import { isPermanent, outageProbe } from './classify.ts';
import type { ConsumerSetup, ConsumerState } from './consumer-setup.ts';
import { Failures } from './failures.ts';
import { createDrainer } from './key-order/drain.ts';
import { KeyOrder } from './key-order/key-order.ts';
import type { ConsumerOptions } from './options.ts';
import { createPartitionWorker } from './partition-worker.ts';
import { PausedRetries } from './paused-retries.ts';
import { Settler } from './settle.ts';
import { StartedRecords } from './started.ts';
import { consumerWatch } from './watch.ts';

/** The parts a consumer is made of, wired to its options and to its shared state. */
export type ConsumerParts = ReturnType<typeof createConsumerParts>;

/** Makes a consumer's parts: what settles failures (settler, failures), and what applies batches (worker, drainer). */
export function createConsumerParts(options: ConsumerOptions, setup: ConsumerSetup, state: ConsumerState) {
  const watch = consumerWatch({
    group: options.group,
    topics: options.topics,
    transport: options.transport.name,
    instanceId: options.instanceId,
    logger: setup.logger,
  });
  const shared = sharedParts(options, setup, watch.outcome(options.onOutcome));
  const { settler, failures } = settlementOf(options, setup, state, shared);
  const drainer = shared.keyOrder
    ? createDrainer({
        db: options.db,
        keyOrder: shared.keyOrder,
        applyIn: shared.applyIn,
        settler,
        maxAttempts: setup.maxAttempts,
        retryTopics: setup.retryTopics !== undefined,
        intervalMs: options.drainIntervalMs ?? 1000,
        decode: shared.decode,
        isOutage: shared.isOutage,
        logger: setup.logger,
        onOutcome: shared.onOutcome,
        faults: options.faults,
      })
    : undefined;
  const handleBatch = workerOf(options, setup, state, {
    ...shared,
    settler,
    failures,
    drainSoon: () => drainer?.soon(),
  });
  return { ...shared, watch, settler, failures, drainer, handleBatch };
}

type Shared = ReturnType<typeof sharedParts>;

/** What the settling and the applying parts both use: paused retries, dead letters, started records, the applier. */
function sharedParts(options: ConsumerOptions, setup: ConsumerSetup, onOutcome: ConsumerOptions['onOutcome']) {
  const { db, group, handler, batchHandler } = options;
  const { schema, maxBatchSize } = setup;
  const system = systemOf(options.transport.name);
  const dedup = loadSql(import.meta.url, 'dedup.sql', schema);
  return {
    retries: new PausedRetries(eventKeyOfRecord),
    store: deadLetterStore({ schema }),
    started: new StartedRecords(db, { group, schema, maxAttempts: setup.maxAttempts, budget: maxBatchSize }),
    keyOrder: options.keyOrdered ? new KeyOrder(schema, group) : undefined,
    isOutage: outageProbe(db),
    system,
    applyIn: createApplier({ group, handler, batchHandler, dedup, system }),
    decode: options.decode ?? decodeEvent,
    onOutcome,
  };
}

/** Where a failing record goes: retried in place, forwarded to a retry topic, or kept as a dead letter. */
function settlementOf(options: ConsumerOptions, setup: ConsumerSetup, state: ConsumerState, shared: Shared) {
  const { db, group } = options;
  const { logger, retryTopics, backoff } = setup;
  const processedSql = loadSql(import.meta.url, 'processed.sql', setup.schema);
  const unclaimSql = loadSql(import.meta.url, 'unclaim.sql', setup.schema);
  const settler = new Settler({
    db,
    group,
    logger,
    store: shared.store,
    keyOrder: shared.keyOrder,
    retryTopics,
    backoff,
    transportConsumer: () => state.transportConsumer!,
    producer: () => {
      state.producer ??= options.transport.producer({ clientId: `${group}-retries` });
      return state.producer;
    },
    offsetsInTransaction: () => state.offsetsInTransaction,
    onDeadLetter: options.onDeadLetter,
    isPermanent: (error) => isPermanent(error, options.permanentErrors),
    isProcessed: async (tx, eventId) => {
      if ((await tx.query(processedSql, [group, eventId])).rowCount === 0) return true;
      await tx.query(unclaimSql, [group, eventId]);
      return false;
    },
  });
  const failures = new Failures({
    group,
    logger,
    retries: shared.retries,
    settler,
    retryTopics,
    isOutage: shared.isOutage,
    backoff,
    maxAttempts: setup.maxAttempts,
    deadLetters: options.deadLetters ?? true,
    permanentErrors: options.permanentErrors,
    onStopped: options.onStopped,
    transportConsumer: () => state.transportConsumer,
  });
  return { settler, failures };
}

/** The transport's batch handler: one partition's batch at a time, in lanes (`partition-worker.ts`). */
function workerOf(
  options: ConsumerOptions,
  setup: ConsumerSetup,
  state: ConsumerState,
  parts: Shared & Pick<ReturnType<typeof settlementOf>, 'settler' | 'failures'> & { drainSoon: () => void },
): BatchHandler {
  const { db, group } = options;
  const { logger } = setup;
  return createPartitionWorker({
    ...parts,
    db,
    group,
    retryTopics: setup.retryTopics,
    givenUpFrom: (tp, from) =>
      parts.store.givenUpFrom(db, { consumer: group, topic: tp.topic, partition: tp.partition, from }),
    skewed: (record, skewMs) =>
      logger.warn(
        "a retry topic's record is due further away than the topic's delay (the forwarding member's clock is ahead, or the header was written by hand); tried now",
        { topic: record.topic, partition: record.partition, offset: record.offset, skewMs },
      ),
    lookupFailed: (tp, error) =>
      logger.warn('could not look up the dead letters of a partition; paused, and looked up again', {
        topic: tp.topic,
        partition: tp.partition,
        ...errorFields(error),
      }),
    concurrency: setup.concurrency,
    offsetsInTransaction: () => state.offsetsInTransaction,
    transportConsumer: () => state.transportConsumer!,
    held: () => state.held,
    hold: (tp: TopicPartition) => state.heldPartitions.set(partitionId(tp), tp),
    faults: options.faults,
  });
}
