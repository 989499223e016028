import { within } from '../lifecycle.ts';
import { errorFields } from '../observability/logger.ts';
import { createConsumerParts } from './consumer-parts.ts';
import { type ConsumerState, setUpConsumer } from './consumer-setup.ts';
import { startConsumer } from './consumer-start.ts';
import type { ConsumerOptions, EffectivelyConsumer } from './options.ts';

export type { ConsumerOptions, EffectivelyConsumer } from './options.ts';

/**
 * The idempotent consumer. For each batch, in ONE database transaction: claim the batch's event ids in
 * `processed_events` (one statement), run the handler for the fresh ones only, commit; then commit the offsets.
 * A crash between the two commits redelivers events whose dedup rows exist: they are reported as duplicates.
 * `createConsumer<OrderConfirmed>({ handler })` types `event.data` in the handler (a declaration: see `EventHandler`).
 */
export function createConsumer<T = unknown>(typed: ConsumerOptions<T>): EffectivelyConsumer {
  const options = typed as ConsumerOptions;
  const setup = setUpConsumer(options);
  const { logger } = setup;
  const state: ConsumerState = {
    transportConsumer: undefined,
    held: false,
    heldPartitions: new Map(),
    producer: undefined,
    offsetsInTransaction: false,
  };
  const parts = createConsumerParts(options, setup, state);
  const { watch } = parts;
  let starting: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;

  const consumer: EffectivelyConsumer = {
    start() {
      if (closing) return Promise.reject(new Error('consumer is closed'));
      starting ??= startConsumer(options, setup, state, parts).then(
        (timer) => {
          purgeTimer = timer;
        },
        (error: unknown) => {
          state.releasePool?.(); // a start that failed holds no share of the pool
          throw error;
        },
      );
      return starting;
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= (async () => {
        watch.closed();
        clearInterval(purgeTimer);
        parts.retries.close();
        parts.started.close();
        await starting?.catch(() => undefined);
        // The transport waits for the batch in flight and flushes its pending offset commits before it disconnects.
        const closed = Promise.all([state.transportConsumer?.close(), parts.drainer?.close()]);
        if (!(await within(closed, timeoutMs))) {
          logger.warn('consumer close timed out waiting for the in-flight batch', { timeoutMs });
        }
        await state.producer?.close();
        state.releasePool?.();
      })();
      return closing;
    },
    pause() {
      state.held = true;
    },
    resume() {
      state.held = false;
      const partitions = [...state.heldPartitions.values()];
      state.heldPartitions.clear();
      if (partitions.length > 0) {
        try {
          state.transportConsumer?.resume(partitions);
        } catch (error) {
          logger.debug('resume failed (partitions revoked meanwhile)', errorFields(error));
        }
      }
    },
    get paused() {
      return state.held;
    },
    isRunning: watch.isRunning,
    stats: watch.stats,
    [Symbol.asyncDispose]() {
      return consumer.close();
    },
  };
  return consumer;
}
