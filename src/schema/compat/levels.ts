/**
 * Compatibility levels (the Confluent names): which old schemas a new one is checked against, and in which direction.
 * BACKWARD: the new schema reads data written with the old. FORWARD: the old schema reads data written with the new.
 * FULL: both. Plain levels check the latest old schema only; the _TRANSITIVE ones check every old schema.
 */
import type { Direction } from './violation.ts';

export const levels = [
  'BACKWARD',
  'BACKWARD_TRANSITIVE',
  'FORWARD',
  'FORWARD_TRANSITIVE',
  'FULL',
  'FULL_TRANSITIVE',
] as const;
export type Level = (typeof levels)[number];

export const isLevel = (value: unknown): value is Level => (levels as readonly unknown[]).includes(value);

export interface Step {
  /** Index into the old schemas (oldest first). */
  against: number;
  direction: Direction;
}

/** The checks a level asks for, given `oldCount` old schemas (oldest first). */
export function steps(level: Level, oldCount: number): Step[] {
  const transitive = level.endsWith('_TRANSITIVE');
  const base = level.replace('_TRANSITIVE', '');
  const directions: Direction[] = base === 'FULL' ? ['BACKWARD', 'FORWARD'] : [base as Direction];
  const against = transitive ? [...Array(oldCount).keys()] : oldCount > 0 ? [oldCount - 1] : [];
  return against.flatMap((index) => directions.map((direction) => ({ against: index, direction })));
}

/** The (writer, reader) pair of one step: BACKWARD writes with the old schema, FORWARD with the new. */
export const writerReader = <T>(direction: Direction, old: T, next: T): [T, T] =>
  direction === 'BACKWARD' ? [old, next] : [next, old];
