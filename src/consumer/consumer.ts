import { librarySchema } from '../db/identifiers.ts';
import { loadSql } from '../db/sql.ts';
import { storableText } from '../db/storable.ts';
import { deadLetterStore } from '../deadletter/store.ts';
import { decodeEvent, eventKeyOfRecord } from '../envelope/cloudevents.ts';
import { topicNameProblem } from '../envelope/topic-name.ts';
import { invalidOptions } from '../errors.ts';
import { within } from '../lifecycle.ts';
import { callBack } from '../observability/callback.ts';
import { errorFields, type Logger, stderrLogger } from '../observability/logger.ts';
import { systemOf } from '../observability/semconv.ts';
import type { Consumer, Producer, TopicPartition, Transport } from '../transport/port.ts';
import { partitionId } from '../transport/position.ts';
import { createApplier } from './apply.ts';
import { isPermanent, outageProbe } from './classify.ts';
import { Failures } from './failures.ts';
import { createDrainer } from './key-order/drain.ts';
import { KeyOrder } from './key-order/key-order.ts';
import { resolveConcurrency } from './lanes.ts';
import type { ConsumerOptions, EffectivelyConsumer } from './options.ts';
import { createPartitionWorker } from './partition-worker.ts';
import { PausedRetries } from './paused-retries.ts';
import { fitPool } from './pool-fit.ts';
import { createRetryTopics } from './prepare.ts';
import { purgeProcessed } from './retention.ts';
import { RetryTopics } from './retry-topics.ts';
import { Settler } from './settle.ts';
import { StartedRecords } from './started.ts';
import { consumerWatch } from './watch.ts';

export type { ConsumerOptions, EffectivelyConsumer } from './options.ts';

/**
 * The idempotent consumer. For each batch, in ONE database transaction: claim the batch's event ids in
 * `processed_events` (one statement), run the handler for the fresh ones only, commit; then commit the offsets.
 * A crash between the two commits redelivers events whose dedup rows exist: they are reported as duplicates.
 * `createConsumer<OrderConfirmed>({ handler })` types `event.data` in the handler (a declaration: see `EventHandler`).
 */
export function createConsumer<T = unknown>(typed: ConsumerOptions<T>): EffectivelyConsumer {
  const options = typed as ConsumerOptions;
  const schema = librarySchema(options.schema);
  const maxBatchSize = options.maxBatchSize ?? 500;
  if (!options.group) throw invalidOptions('group', 'a non-empty string');
  if (!Array.isArray(options.topics) || options.topics.length === 0)
    throw invalidOptions('topics', 'at least one topic');
  if ((typeof options.handler === 'function') === (typeof options.batchHandler === 'function')) {
    throw invalidOptions('handler', 'exactly one of `handler` and `batchHandler` must be a function');
  }
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) throw invalidOptions('maxBatchSize', 'a positive integer');
  const retryBase = options.retry?.baseMs ?? 500;
  const retryCap = options.retry?.capMs ?? 30_000;
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw invalidOptions('maxAttempts', 'a positive integer');
  const keepDeadLetters = options.deadLetters ?? true;
  const retries = new PausedRetries(eventKeyOfRecord);
  const store = deadLetterStore({ schema });
  const logger = options.logger ?? stderrLogger;
  const { db, group, handler, batchHandler } = options;
  const started = new StartedRecords(db, { group, schema, maxAttempts, budget: maxBatchSize });
  const groupSettings = loadSql(import.meta.url, 'group-settings.sql', schema);
  const processedSql = loadSql(import.meta.url, 'processed.sql', schema);
  const unclaimSql = loadSql(import.meta.url, 'unclaim.sql', schema);
  const system = systemOf(options.transport.name);
  const dedup = loadSql(import.meta.url, 'dedup.sql', schema);
  const applyIn = createApplier({ group, handler, batchHandler, dedup, system });
  const decode = options.decode ?? decodeEvent;
  const isOutage = outageProbe(db);
  const retryTopics = options.retryTopics ? new RetryTopics(options.topics, options.retryTopics) : undefined;
  // Kafka's rule on every transport, for the topics and the retry chain's names derived from them
  for (const topic of retryTopics?.subscriptions() ?? options.topics) {
    const problem = topicNameProblem(topic);
    if (problem !== undefined) throw invalidOptions('topics', `\`${storableText(topic).slice(0, 300)}\` ${problem}`);
  }
  const keyOrder = options.keyOrdered ? new KeyOrder(schema, group) : undefined;
  const watch = consumerWatch({
    group,
    topics: options.topics,
    transport: options.transport.name,
    instanceId: options.instanceId,
    logger,
  });
  const onOutcome = watch.outcome(options.onOutcome);
  const concurrency = resolveConcurrency(options.concurrency);

  let transportConsumer: Consumer | undefined;
  let held = false;
  const heldPartitions = new Map<string, TopicPartition>();
  let producer: Producer | undefined;
  let offsetsInTransaction = false;
  const settler = new Settler({
    db,
    group,
    logger,
    store,
    keyOrder,
    retryTopics,
    backoff: { baseMs: retryBase, capMs: retryCap },
    transportConsumer: () => transportConsumer!,
    producer: () => {
      producer ??= options.transport.producer({ clientId: `${group}-retries` });
      return producer;
    },
    offsetsInTransaction: () => offsetsInTransaction,
    onDeadLetter: options.onDeadLetter,
    isPermanent: (error) => isPermanent(error, options.permanentErrors),
    isProcessed: async (tx, eventId) => {
      if ((await tx.query(processedSql, [group, eventId])).rowCount === 0) return true;
      await tx.query(unclaimSql, [group, eventId]);
      return false;
    },
  });
  const drainer = keyOrder
    ? createDrainer({
        db,
        keyOrder,
        applyIn,
        settler,
        maxAttempts,
        retryTopics: retryTopics !== undefined,
        intervalMs: options.drainIntervalMs ?? 1000,
        decode,
        isOutage,
        logger,
        onOutcome,
        faults: options.faults,
      })
    : undefined;
  const failures = new Failures({
    group,
    logger,
    retries,
    settler,
    retryTopics,
    isOutage,
    backoff: { baseMs: retryBase, capMs: retryCap },
    maxAttempts,
    deadLetters: keepDeadLetters,
    permanentErrors: options.permanentErrors,
    onStopped: options.onStopped,
    transportConsumer: () => transportConsumer,
  });
  const handleBatch = createPartitionWorker({
    db,
    group,
    applyIn,
    system,
    decode,
    retryTopics,
    keyOrder,
    drainSoon: () => drainer?.soon(),
    settler,
    failures,
    retries,
    started,
    givenUpFrom: (tp, from) =>
      store.givenUpFrom(db, { consumer: group, topic: tp.topic, partition: tp.partition, from }),
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
    concurrency,
    offsetsInTransaction: () => offsetsInTransaction,
    transportConsumer: () => transportConsumer!,
    held: () => held,
    hold: (tp: TopicPartition) => heldPartitions.set(partitionId(tp), tp),
    faults: options.faults,
    onOutcome,
  });
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;

  const consumer: EffectivelyConsumer = {
    start() {
      if (closing) return Promise.reject(new Error('consumer is closed'));
      starting ??= (async () => {
        // each transaction in flight holds a connection: grow the library's pool to fit, or refuse a pool too small
        fitPool(db, concurrency, group, logger);
        // Redrive reads this to refuse replays older than the dedup window.
        const retention = options.retention || undefined;
        await db.query(groupSettings, [group, retention?.keepMs ?? null]);
        if (options.retention === undefined) {
          logger.warn(
            "dedup rows are never purged: processed_events grows without bound; set `retention: { keepMs }` to at least the topics' retention (or `retention: false` if you purge them yourself)",
            { group },
          );
        }
        const topics = retryTopics ? await createRetryTopics(options, retryTopics) : options.topics;
        transportConsumer = options.transport.consumer({
          group,
          topics,
          maxBatchSize,
          fromBeginning: options.fromBeginning ?? true,
          ...(concurrency.partitions > 1 ? { partitionsInFlight: concurrency.partitions } : {}),
          ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
          ...(options.prefetchKb === undefined ? {} : { prefetchKb: options.prefetchKb }),
          ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
          onAssign: (partitions) => {
            watch.assigned(partitions); // logged at info
            callBack(logger, 'onAssign', options.onAssign, [partitions]);
          },
          // Attempts, records given up on, the dead-letter lookup and a stop are per assignment: every way one ends
          // (a revoke, a lost lease) calls this. A stopped partition is resumed before it goes (no timer would).
          onRevoke: async (partitions) => {
            watch.revoked(partitions);
            started.forget(partitions);
            const stopped = retries.forget(partitions);
            try {
              if (stopped.length > 0) transportConsumer?.resume(stopped);
            } catch (error) {
              logger.debug('resume of a stopped partition at the end of its assignment failed', errorFields(error));
            }
          },
        });
        offsetsInTransaction =
          (options.offsetsInTransaction ?? true) &&
          Boolean(transportConsumer.commitWithin && transportConsumer.usesDb?.(db));
        await transportConsumer.run(handleBatch);
        watch.started();
        void warnOfMissingTopics(options.transport, options.topics, logger);
        drainer?.start();
        if (retention) {
          const { keepMs, everyMs = 60_000 } = retention;
          purgeTimer = setInterval(() => {
            purgeProcessed(db, { schema, olderThanMs: keepMs }).catch((error: unknown) =>
              logger.warn('dedup purge failed', errorFields(error)),
            );
          }, everyMs);
          purgeTimer.unref();
        }
      })();
      return starting;
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        watch.closed();
        clearInterval(purgeTimer);
        retries.close();
        started.close();
        await starting?.catch(() => undefined);
        // The transport waits for the batch in flight and flushes its pending offset commits before it disconnects.
        const closed = Promise.all([transportConsumer?.close(), drainer?.close()]);
        if (!(await within(closed, timeoutMs))) {
          logger.warn('consumer close timed out waiting for the in-flight batch', { timeoutMs });
        }
        await producer?.close();
      })();
      return closing;
    },
    pause() {
      held = true;
    },
    resume() {
      held = false;
      const partitions = [...heldPartitions.values()];
      heldPartitions.clear();
      if (partitions.length > 0) {
        try {
          transportConsumer?.resume(partitions);
        } catch (error) {
          logger.debug('resume failed (partitions revoked meanwhile)', errorFields(error));
        }
      }
    },
    get paused() {
      return held;
    },
    isRunning: watch.isRunning,
    stats: watch.stats,
    [Symbol.asyncDispose]() {
      return consumer.close();
    },
  };
  return consumer;
}

/**
 * A consumer started before its topic exists (the natural deploy order) waits for it; say so, with what to do, instead
 * of waiting in silence. Asking never creates the topic. Best effort: an error here is only logged at debug.
 */
async function warnOfMissingTopics(transport: Transport, topics: string[], logger: Logger): Promise<void> {
  const admin = transport.admin();
  try {
    const existing = new Set(await admin.listTopics());
    for (const topic of topics.filter((name) => !existing.has(name))) {
      logger.warn(`waiting for topic ${topic}: it does not exist yet; the consumer picks it up once created`, {
        topic,
        hint:
          transport.name === 'kafka'
            ? `npx effectively topics create ${topic}`
            : 'the embedded log creates it with the first event sent to it (the relay), or transport.admin().createTopics()',
      });
    }
  } catch (error) {
    logger.debug('could not list topics', errorFields(error));
  } finally {
    await admin.close().catch(() => undefined);
  }
}
