import type { PipelineRecord } from '../../src/pipeline/types.ts';

/** Inputs are `{"seq": n}`; every 997th (from 13) is poison: the transform refuses it, it must land on the DLT. */
export function isPoison(seq: number): boolean {
  return seq % 997 === 13;
}

/** An input: its sequence number, and a padding when it is the scenario's one large input. */
export function parseInput(record: PipelineRecord): { seq: number; pad?: string } {
  return JSON.parse(record.value?.toString('utf8') ?? 'null') as { seq: number; pad?: string };
}
