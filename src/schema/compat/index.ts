/**
 * Offline schema compatibility: is a new schema compatible with the old ones at a level (BACKWARD, FORWARD, FULL and
 * their _TRANSITIVE forms), for Avro, JSON Schema or Protobuf? Avro and JSON Schema are given as parsed JSON, Protobuf
 * as the `.proto` text (or `{ schema, imports }` with the text of the files it imports); no registry is involved.
 */
import { invalidOptions } from '../../errors.ts';
import { resolveAvro } from './avro.ts';
import { parseAvro } from './avro-schema.ts';
import { compareJsonSchemas } from './json-schema.ts';
import { parseJsonSchema } from './json-schema-doc.ts';
import { isLevel, type Level, levels, steps, writerReader } from './levels.ts';
import { compareProtobuf, parseProto, protobufRenames } from './protobuf.ts';
import type { Direction, Violation } from './violation.ts';

export type { Level } from './levels.ts';
export { isLevel, levels } from './levels.ts';
export type { Direction, Violation } from './violation.ts';

export const formats = ['avro', 'json', 'protobuf'] as const;
export type SchemaFormat = (typeof formats)[number];

interface Checker<T> {
  parse(raw: unknown): T;
  check(writer: T, reader: T, direction: Direction): Violation[];
  /** Changes that break no reader but something else (a Protobuf rename: the JSON mapping), old against new. */
  notes?(old: T, next: T): Violation[];
}
const checkers: Record<SchemaFormat, Checker<unknown>> = {
  avro: { parse: parseAvro, check: resolveAvro } as Checker<unknown>,
  json: { parse: parseJsonSchema, check: compareJsonSchemas } as Checker<unknown>,
  protobuf: { parse: parseProto, check: compareProtobuf, notes: protobufRenames } as Checker<unknown>,
};

export interface CompatibilityInput {
  format: SchemaFormat;
  level: Level;
  /** The schemas already in use, oldest first (parsed JSON). */
  old: unknown[];
  /** The candidate schema (parsed JSON). */
  next: unknown;
}

export interface CompatibilityResult {
  compatible: boolean;
  /** Each with `direction` and `against` (the index into `old`) set. */
  violations: Violation[];
  /** The indexes into `old` the level checked against. */
  checked: number[];
  /** What is compatible but worth a look (a renamed Protobuf field), each with `against` set; never a refusal. */
  notes: Violation[];
}

function checkerFor(format: string): Checker<unknown> {
  if (!(formats as readonly string[]).includes(format))
    throw invalidOptions('format', `must be one of ${formats.join(', ')}`);
  return checkers[format as SchemaFormat];
}

/** Throws EffectivelyError(EFF_SCHEMA_INVALID) when `schema` is not a valid schema of the format. */
export function validateSchema(format: SchemaFormat, schema: unknown): void {
  checkerFor(format).parse(schema);
}

/** Checks `next` against `old` at `level`; compatible when no rule is violated (always, with no old schema). */
export function checkCompatibility(input: CompatibilityInput): CompatibilityResult {
  const checker = checkerFor(input.format);
  if (!isLevel(input.level)) throw invalidOptions('level', `must be one of ${levels.join(', ')}`);
  const next = checker.parse(input.next);
  const old = input.old.map((schema) => checker.parse(schema));
  const plan = steps(input.level, old.length);
  const violations = plan.flatMap(({ against, direction }) => {
    const [writer, reader] = writerReader(direction, old[against], next);
    return checker.check(writer, reader, direction).map((v) => ({ ...v, direction, against }));
  });
  const checked = [...new Set(plan.map((s) => s.against))];
  const notes = checked.flatMap((against) =>
    (checker.notes?.(old[against], next) ?? []).map((note) => ({ ...note, against })),
  );
  return { compatible: violations.length === 0, violations, checked, notes };
}
