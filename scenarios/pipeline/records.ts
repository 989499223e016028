import type { PipelineRecord } from '../../src/pipeline/types.ts';

/** Inputs are `{"seq": n}`; every 997th (from 13) is poison: the transform refuses it, it must land on the DLT. */
export function isPoison(seq: number): boolean {
  return seq % 997 === 13;
}

export function parseInput(record: PipelineRecord): { seq: number } {
  return JSON.parse(record.value?.toString('utf8') ?? 'null') as { seq: number };
}
