/**
 * What a compatibility check reports, and the wording both checkers share. A check always reads data written with one
 * schema (the writer) with another (the reader): BACKWARD reads old data with the new schema, FORWARD new data with
 * the old one. Messages always speak of "old → new", whichever of the two is the writer.
 */
export type Direction = 'BACKWARD' | 'FORWARD';

export interface Violation {
  /** Where, e.g. `OrderConfirmed.seats[]` (root name, `.field`, `[]` for array items, `{}` for map values). */
  path: string;
  /** A stable rule id, e.g. `type-changed`, `field-added-without-default`. */
  rule: string;
  /** One line a person understands. */
  message: string;
  /** Set by `checkCompatibility`: the direction checked and which old schema (index into `old`) it was checked against. */
  direction?: Direction;
  against?: number;
}

/** A position in a schema: the root's name and the steps below it (field names, `[]`, `{}`). */
export interface Path {
  root: string;
  steps: string[];
}

export const rootPath = (root: string): Path => ({ root, steps: [] });
export const at = (path: Path, step: string): Path => ({ root: path.root, steps: [...path.steps, step] });

const joinSteps = (steps: string[]): string =>
  steps.map((s, i) => (s === '[]' || s === '{}' || i === 0 ? s : `.${s}`)).join('');

export function pathText(path: Path): string {
  const below = joinSteps(path.steps);
  return below === ''
    ? path.root
    : below.startsWith('[') || below.startsWith('{')
      ? path.root + below
      : `${path.root}.${below}`;
}

/** "field `customer.email`", "items of field `seats`", "values of field `prices`", or "the top level". */
export function subject(path: Path): string {
  const last = path.steps.at(-1);
  if (last === undefined) return 'the top level';
  const rest: Path = { root: path.root, steps: path.steps.slice(0, -1) };
  if (last === '[]') return `items of ${subject(rest)}`;
  if (last === '{}') return `values of ${subject(rest)}`;
  return `field \`${joinSteps(path.steps)}\``;
}

/** The two schemas of one check, named by their age. */
export function roles(direction: Direction): { writer: 'old' | 'new'; reader: 'old' | 'new' } {
  return direction === 'BACKWARD' ? { writer: 'old', reader: 'new' } : { writer: 'new', reader: 'old' };
}

/** [old, new] out of [writer, reader]. */
export function oldNew<T>(direction: Direction, writer: T, reader: T): [T, T] {
  return direction === 'BACKWARD' ? [writer, reader] : [reader, writer];
}

/** What breaks, in the words of the direction: "old data cannot be read" / "old readers cannot read new data". */
export const consequence = (direction: Direction): string =>
  direction === 'BACKWARD' ? 'old data cannot be read' : 'old readers cannot read new data';

/** Collects violations during one writer → reader check. */
export class Findings {
  readonly list: Violation[] = [];
  constructor(readonly direction: Direction) {}
  add(path: Path, rule: string, message: string): void {
    this.list.push({ path: pathText(path), rule, message });
  }
}
