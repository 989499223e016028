import type { Db } from '../../db/port.ts';
import type { Event } from '../../envelope/event.ts';
import type { FaultInjector } from '../../observability/faults.ts';
import { errorFields, type Logger } from '../../observability/logger.ts';
import type { IncomingRecord } from '../../transport/port.ts';
import { type ApplyIn, HandlerFailure } from '../apply.ts';
import type { Settler } from '../settle.ts';
import type { Outcome } from '../types.ts';
import type { KeyOrder, Parked } from './key-order.ts';

export interface DrainerOptions {
  db: Db;
  keyOrder: KeyOrder;
  applyIn: ApplyIn;
  settler: Settler;
  /** Attempts of a parked record before it becomes a dead letter (blocking mode); with retry topics it is forwarded. */
  maxAttempts: number;
  retryTopics: boolean;
  /** How often released holds are looked for (besides right after this consumer released one). */
  intervalMs: number;
  logger: Logger;
  onOutcome: ((event: Event, outcome: Outcome) => void) | undefined;
  decode: (record: IncomingRecord) => Event | Promise<Event>;
  isOutage: (error: unknown) => Promise<boolean>;
  faults?: FaultInjector | undefined;
}

/**
 * Applies the records parked behind released holds, in their order, one transaction each; the hold goes with the last.
 * A parked record that fails becomes its key's new holder: forwarded to the first retry topic, or (without retry topics)
 * tried again on later passes and kept as a dead letter after `maxAttempts`.
 */
export function createDrainer(options: DrainerOptions) {
  const { db, keyOrder, applyIn, settler, logger } = options;
  const stop = new AbortController();
  const failures = new Map<string, number>();
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  /** Applies the next parked record of a key; false when the key is done (or failed and is held again). */
  async function step(topic: string, key: string): Promise<boolean> {
    let parked: Parked | undefined;
    let event: Event | undefined;
    let outcome: Outcome | undefined;
    try {
      await db.transaction(async (tx) => {
        parked = await keyOrder.nextParked(tx, topic, key);
        if (!parked) return;
        event = await options.decode(parked.record);
        [outcome] = await applyIn(tx, [{ event, record: parked.record }], stop.signal);
        await keyOrder.unpark(tx, parked.id);
      });
    } catch (caught) {
      if (!parked) throw caught;
      const error = caught instanceof HandlerFailure ? caught.error : caught;
      await options.faults?.('drain:after-rollback');
      await failed(parked, error);
      return false;
    }
    if (!parked) return false;
    failures.delete(parked.id);
    if (event && outcome) options.onOutcome?.(event, outcome);
    return true;
  }

  async function failed({ id, record }: Parked, error: unknown): Promise<void> {
    // An outage is nobody's fault: the record stays parked and the next pass tries again, counting nothing.
    if (await options.isOutage(error)) return;
    const attempts = (failures.get(id) ?? 0) + 1;
    const permanent = settler.ctx.isPermanent(error);
    logger.warn('parked record failed', {
      topic: record.topic,
      offset: record.offset,
      attempts,
      ...errorFields(error),
    });
    if (options.retryTopics) {
      // It becomes the holder: forwarded like a record of the main topic; the parked row goes with the hold taken.
      await settler.forward(record, error, 1, stop.signal, { parkedId: id, record });
    } else if (permanent || attempts >= options.maxAttempts) {
      const consumed = { parkedId: id, record };
      await settler.giveUp(consumed, { record, error, attempts, firstFailedAt: new Date() }, stop.signal);
    } else {
      failures.set(id, attempts);
      return;
    }
    failures.delete(id);
  }

  async function pass(): Promise<void> {
    do {
      again = false;
      for (const { topic, key } of await keyOrder.released(db)) {
        while (!stop.signal.aborted && (await step(topic, key)));
      }
    } while (again && !stop.signal.aborted);
  }

  function run(): void {
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch((error: unknown) => logger.warn('draining parked records failed; trying again later', errorFields(error)))
      .finally(() => {
        running = undefined;
      });
  }

  return {
    start(): void {
      timer = setInterval(run, options.intervalMs);
      timer.unref();
    },
    /** A hold was just released: drain without waiting for the next tick. */
    soon(): void {
      setImmediate(run);
    },
    async close(): Promise<void> {
      clearInterval(timer);
      stop.abort();
      await running;
    },
  };
}

export type Drainer = ReturnType<typeof createDrainer>;
