import { loadSql } from '../db/sql.ts';
import { callBack } from '../observability/callback.ts';
import { errorFields, type Logger } from '../observability/logger.ts';
import type { Transport } from '../transport/port.ts';
import type { ConsumerParts } from './consumer-parts.ts';
import type { ConsumerSetup, ConsumerState } from './consumer-setup.ts';
import type { ConsumerOptions } from './options.ts';
import { fitPool } from './pool-fit.ts';
import { createRetryTopics } from './prepare.ts';
import { purgeProcessed } from './retention.ts';

/**
 * A consumer's start: the pool fitted, the group's settings written, the transport's consumer made and running the
 * partition worker, then the drainer and the dedup purge. Resolves with the purge's timer (for `close()`).
 */
export async function startConsumer(
  options: ConsumerOptions,
  setup: ConsumerSetup,
  state: ConsumerState,
  parts: ConsumerParts,
): Promise<NodeJS.Timeout | undefined> {
  const { db, group } = options;
  const { logger, retryTopics, concurrency } = setup;
  // each transaction in flight holds a connection: grow the library's pool to fit, or refuse a pool too small
  state.releasePool = fitPool(db, concurrency, group, logger, options.keyOrdered === true);
  // Redrive reads this to refuse replays older than the dedup window.
  const retention = options.retention || undefined;
  await db.query(loadSql(import.meta.url, 'group-settings.sql', setup.schema), [group, retention?.keepMs ?? null]);
  if (options.retention === undefined) {
    logger.warn(
      "dedup rows are never purged: processed_events grows without bound; set `retention: { keepMs }` to at least the topics' retention (or `retention: false` if you purge them yourself)",
      { group },
    );
  }
  const topics = retryTopics ? await createRetryTopics(options, retryTopics) : options.topics;
  const transportConsumer = options.transport.consumer({
    group,
    topics,
    maxBatchSize: setup.maxBatchSize,
    fromBeginning: options.fromBeginning ?? true,
    ...(concurrency.partitions > 1 ? { partitionsInFlight: concurrency.partitions } : {}),
    ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
    ...(options.prefetchKb === undefined ? {} : { prefetchKb: options.prefetchKb }),
    ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
    onAssign: (partitions) => {
      parts.watch.assigned(partitions); // logged at info
      callBack(logger, 'onAssign', options.onAssign, [partitions]);
    },
    // Attempts, records given up on, the dead-letter lookup and a stop are per assignment: every way one ends
    // (a revoke, a lost lease) calls this. A stopped partition is resumed before it goes (no timer would).
    onRevoke: async (partitions) => {
      parts.watch.revoked(partitions);
      parts.started.forget(partitions);
      const stopped = parts.retries.forget(partitions);
      try {
        if (stopped.length > 0) state.transportConsumer?.resume(stopped);
      } catch (error) {
        logger.debug('resume of a stopped partition at the end of its assignment failed', errorFields(error));
      }
    },
  });
  state.transportConsumer = transportConsumer;
  state.offsetsInTransaction =
    (options.offsetsInTransaction ?? true) && Boolean(transportConsumer.commitWithin && transportConsumer.usesDb?.(db));
  await transportConsumer.run(parts.handleBatch);
  parts.watch.started();
  void warnOfMissingTopics(options.transport, options.topics, logger);
  parts.drainer?.start();
  if (!retention) return undefined;
  const { keepMs, everyMs = 60_000 } = retention;
  const purgeTimer = setInterval(() => {
    purgeProcessed(db, { schema: setup.schema, olderThanMs: keepMs }).catch((error: unknown) =>
      logger.warn('dedup purge failed', errorFields(error)),
    );
  }, everyMs);
  purgeTimer.unref();
  return purgeTimer;
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
        hint: transport.name.startsWith('kafka') // kafka, kafka-js (the pure-JavaScript client)
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
