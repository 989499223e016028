import { invalidOptions } from '../errors.ts';
import type { Decoded } from './apply.ts';

/** How the records of one partition's batch are applied: one after the other, or different keys at once. */
export interface Concurrency {
  /** `'partition'` (default): in offset order, one transaction at a time. `'key'`: each key its own lane. */
  mode?: 'partition' | 'key';
  /** Lanes of one batch in flight at once in `'key'` mode (default 16); each lane holds one transaction. */
  max?: number;
  /**
   * Batches of different partitions in flight at once (default 1), each partition its own worker and its own
   * transaction per batch; a revocation waits for the revoked partitions' batches only. Both transports; on Kafka the
   * partitions one fetch brought run at once and the next fetch waits for them all (docs/concurrency.md). Needs as
   * many free database connections.
   */
  partitions?: number;
}

export interface ResolvedConcurrency {
  mode: 'partition' | 'key';
  max: number;
  partitions: number;
}

export function resolveConcurrency(concurrency: Concurrency | undefined): ResolvedConcurrency {
  const mode = concurrency?.mode ?? 'partition';
  if (mode !== 'partition' && mode !== 'key') throw invalidOptions('concurrency.mode', "'partition' or 'key'");
  const max = concurrency?.max ?? 16;
  if (!Number.isInteger(max) || max < 1) throw invalidOptions('concurrency.max', 'a positive integer');
  const partitions = concurrency?.partitions ?? 1;
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw invalidOptions('concurrency.partitions', 'a positive integer');
  }
  return { mode, max, partitions };
}

/** The lane of a record: its key's bytes (records without a key share one lane, in offset order). */
function laneOf(item: Decoded): string {
  const key = item.record.key;
  return key === null ? '' : `k${key.toString('base64')}`;
}

/**
 * Splits `items` into lanes, in offset order inside each lane: one lane in `'partition'` mode, one per key in `'key'`
 * mode. Lanes are ordered by their first record, so the lowest offsets start first.
 */
export function lanesOf(items: Decoded[], mode: 'partition' | 'key'): Decoded[][] {
  if (mode === 'partition' || items.length < 2) return items.length === 0 ? [] : [items];
  const lanes = new Map<string, Decoded[]>();
  for (const item of items) {
    const lane = laneOf(item);
    const list = lanes.get(lane);
    if (list) list.push(item);
    else lanes.set(lane, [item]);
  }
  return [...lanes.values()];
}

/**
 * Runs `run` over `lanes`, at most `max` at once; resolves true when every lane ran to its end. A lane that stops
 * (a retry pause, a lost partition) does not stop the others: their records still finish and are committed as far as
 * the lowest unfinished record allows.
 */
export async function runLanes(
  lanes: Decoded[][],
  max: number,
  run: (lane: Decoded[]) => Promise<boolean>,
): Promise<boolean> {
  if (lanes.length === 1) return run(lanes[0]!);
  let next = 0;
  let allDone = true;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < lanes.length) {
      const lane = lanes[next++]!;
      try {
        if (!(await run(lane))) allDone = false;
      } catch (error) {
        // Thrown only after every lane in flight has ended: the batch never returns with work still running.
        failures.push(error);
        allDone = false;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(max, lanes.length) }, worker));
  if (failures.length > 0) throw failures[0];
  return allDone;
}
