import type { Queryable } from '../db/port.ts';
import type { Event } from '../envelope/event.ts';
import { dedupKeyOf } from '../envelope/identity.ts';
import type { MessagingSystem } from '../observability/semconv.ts';
import { traceProcess } from '../observability/trace-consumer.ts';
import type { IncomingRecord } from '../transport/port.ts';
import { thrownByHandler } from './classify.ts';
import { GuardedTx } from './guarded-tx.ts';
import type { BatchEventHandler, EventHandler, Outcome } from './types.ts';

export interface Decoded {
  event: Event;
  record: IncomingRecord;
}

/**
 * A handler failure in the applied range (the whole transaction rolled back): `exact` when the record at `index` is the
 * one that failed, otherwise `index` is only where to split the range (a batch handler's failure is bisected).
 */
export class HandlerFailure {
  constructor(
    readonly index: number,
    readonly error: unknown,
    readonly exact = false,
  ) {}
}

export interface ApplierOptions {
  group: string;
  handler?: EventHandler | undefined;
  batchHandler?: BatchEventHandler | undefined;
  /** The dedup claim statement (`dedup.sql`). */
  dedup: string;
  /** The transport as a `messaging.system` (the `process` spans' attribute). */
  system: MessagingSystem;
}

/**
 * The heart of the idempotent consumer, inside the caller's transaction: claims the range's event ids in
 * `processed_events` (one statement), then runs the handler for the fresh ones only. Records at the `parked` indexes
 * are neither claimed nor applied (key-ordered retries keep them for later). A handler failure is thrown as a
 * `HandlerFailure` telling where the range should be split.
 */
export function createApplier(options: ApplierOptions) {
  const { group, handler, batchHandler, dedup, system } = options;

  async function applyBatch(tx: Queryable, range: Decoded[], outcomes: Outcome[], signal: AbortSignal) {
    const events: Event[] = [];
    for (const [index, outcome] of outcomes.entries()) if (outcome === 'applied') events.push(range[index]!.event);
    if (events.length === 0) return;
    const records: IncomingRecord[] = [];
    for (const [index, outcome] of outcomes.entries()) if (outcome === 'applied') records.push(range[index]!.record);
    let results: void | ('applied' | 'stale')[];
    const guarded = new GuardedTx(tx);
    try {
      const context = { tx: guarded.tx, signal, group, savepoint: guarded.savepoint };
      results = await traceProcess(system, group, records, events[0]!.id, () => batchHandler!(events, context));
      await guarded.check('the batch handler caught a failed statement');
    } catch (error) {
      thrownByHandler(error);
      const explained = guarded.explain(error, 'the batch handler caught a failed statement');
      throw new HandlerFailure(range.length > 1 ? Math.ceil(range.length / 2) : 0, explained);
    }
    if (results) {
      let next = 0;
      for (const [index, outcome] of outcomes.entries()) {
        if (outcome === 'applied' && results[next++] === 'stale') outcomes[index] = 'stale';
      }
    }
  }

  async function applyEach(tx: Queryable, range: Decoded[], outcomes: Outcome[], signal: AbortSignal) {
    const guarded = new GuardedTx(tx);
    for (const [index, { event, record }] of range.entries()) {
      if (outcomes[index] !== 'applied') continue;
      try {
        const context = {
          tx: guarded.tx,
          signal,
          group,
          savepoint: guarded.savepoint,
          record: { topic: record.topic, partition: record.partition, offset: record.offset },
        };
        const result = await traceProcess(system, group, [record], event.id, () => handler!(event, context));
        // A handler that caught a failed statement without a savepoint left the transaction aborted: its record fails.
        await guarded.check('the handler caught a failed statement');
        if (result === 'stale') outcomes[index] = 'stale';
      } catch (error) {
        thrownByHandler(error);
        throw new HandlerFailure(index, guarded.explain(error, 'the handler caught a failed statement'), true);
      }
    }
  }

  return async function applyIn(
    tx: Queryable,
    range: Decoded[],
    signal: AbortSignal,
    parked: ReadonlySet<number> = new Set(),
  ): Promise<Outcome[]> {
    // The dedup key is the event's identity, source + id (a UUID id is its own key: see envelope/identity.ts).
    const keys = range.map((item, index) => (parked.has(index) ? '' : dedupKeyOf(item.event)));
    const claimed = keys.filter((key) => key !== '');
    const before = new Set<string>();
    if (claimed.length > 0) {
      // Dedup keys are canonical UUIDs, so the array literal needs no quoting.
      const { rows } = await tx.query<{ event_id: string }>(dedup, [group, `{${claimed.join(',')}}`]);
      for (const row of rows) before.add(row.event_id);
    }
    // A repeat (a redelivery: claimed before; or the same id twice in one range: its later copies) is a duplicate.
    const seen = new Set<string>();
    const outcomes: Outcome[] = keys.map((key) => {
      if (key === '') return 'parked';
      if (before.has(key) || seen.has(key)) return 'duplicate';
      seen.add(key);
      return 'applied';
    });
    if (batchHandler) await applyBatch(tx, range, outcomes, signal);
    else await applyEach(tx, range, outcomes, signal);
    return outcomes;
  };
}

export type ApplyIn = ReturnType<typeof createApplier>;
