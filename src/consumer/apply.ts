import type { Queryable } from '../db/port.ts';
import type { Event } from '../envelope/event.ts';
import type { IncomingRecord } from '../transport/port.ts';
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
}

/**
 * The heart of the idempotent consumer, inside the caller's transaction: claims the range's event ids in
 * `processed_events` (one statement), then runs the handler for the fresh ones only. Records at the `parked` indexes
 * are neither claimed nor applied (key-ordered retries keep them for later). A handler failure is thrown as a
 * `HandlerFailure` telling where the range should be split.
 */
export function createApplier(options: ApplierOptions) {
  const { group, handler, batchHandler, dedup } = options;

  async function applyBatch(tx: Queryable, range: Decoded[], outcomes: Outcome[], signal: AbortSignal) {
    const events: Event[] = [];
    for (const [index, outcome] of outcomes.entries()) if (outcome === 'applied') events.push(range[index]!.event);
    if (events.length === 0) return;
    let results: void | ('applied' | 'stale')[];
    try {
      results = await batchHandler!(events, { tx, signal, group });
    } catch (error) {
      throw new HandlerFailure(range.length > 1 ? Math.ceil(range.length / 2) : 0, error);
    }
    if (results) {
      let next = 0;
      for (const [index, outcome] of outcomes.entries()) {
        if (outcome === 'applied' && results[next++] === 'stale') outcomes[index] = 'stale';
      }
    }
  }

  async function applyEach(tx: Queryable, range: Decoded[], outcomes: Outcome[], signal: AbortSignal) {
    for (const [index, { event, record }] of range.entries()) {
      if (outcomes[index] !== 'applied') continue;
      try {
        const result = await handler!(event, {
          tx,
          signal,
          group,
          record: { topic: record.topic, partition: record.partition, offset: record.offset },
        });
        if (result === 'stale') outcomes[index] = 'stale';
      } catch (error) {
        throw new HandlerFailure(index, error, true);
      }
    }
  }

  return async function applyIn(
    tx: Queryable,
    range: Decoded[],
    signal: AbortSignal,
    parked: ReadonlySet<number> = new Set(),
  ): Promise<Outcome[]> {
    const claimed = range.filter((_, index) => !parked.has(index)).map((item) => item.event.id);
    const fresh = new Set<string>();
    if (claimed.length > 0) {
      const { rows } = await tx.query<{ event_id: string }>(dedup, [group, claimed]);
      for (const row of rows) fresh.add(row.event_id);
    }
    // A repeat (redelivery, or the same id twice in one range) finds no fresh claim left.
    const outcomes: Outcome[] = range.map(({ event }, index) =>
      parked.has(index) ? 'parked' : fresh.delete(event.id) ? 'applied' : 'duplicate',
    );
    if (batchHandler) await applyBatch(tx, range, outcomes, signal);
    else await applyEach(tx, range, outcomes, signal);
    return outcomes;
  };
}

export type ApplyIn = ReturnType<typeof createApplier>;
