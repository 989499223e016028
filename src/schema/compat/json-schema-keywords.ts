/**
 * The JSON Schema keywords compared beside types, properties and unions: array positions (tuple `items`,
 * `prefixItems`, `additionalItems`), `contains`, `not`, and `dependencies` (`dependentRequired`, `dependentSchemas`).
 * Each asks the same question as the rest of the check: does every value the writer's schema accepts pass the
 * reader's? Where a rule is only sufficient (it may refuse a change that is in fact safe), its comment says so.
 */
import { accepts, acceptsAll, arrayModel, isObject, type JsonNode, typesOf } from './json-schema-doc.ts';
import { at, type Direction, type Path, subject } from './violation.ts';

/** What these rules need of the comparison they are part of. */
export interface Compare {
  readonly direction: Direction;
  /** Compares writer → reader at `path`, reporting into the comparison's findings. */
  check(writer: JsonNode, reader: JsonNode, path: Path): void;
  /** Whether every writer value passes `reader`, reporting nothing. */
  fits(writer: JsonNode, reader: JsonNode, path: Path): boolean;
  /** The same with the roles swapped: every value of the reader-side `a` passes the writer-side `b`. */
  fitsReversed(a: JsonNode, b: JsonNode, path: Path): boolean;
  add(path: Path, rule: string, message: string): void;
}

const reads = (direction: Direction) =>
  direction === 'BACKWARD' ? 'the new schema rejects old data' : 'old readers reject new data';

/** Item by item over the longer prefix, then the rest; positions a writer array cannot have are skipped. */
export function compareArrays(
  c: Compare,
  writer: Record<string, unknown>,
  reader: Record<string, unknown>,
  path: Path,
) {
  const w = arrayModel(writer);
  const r = arrayModel(reader);
  const items = at(path, '[]');
  const positions = Math.max(w.prefix.length, r.prefix.length);
  let ends = false; // the writer's arrays stop before this position
  for (let i = 0; i < positions && !ends; i++) {
    const written = w.prefix[i] ?? w.rest;
    ends = written === false;
    if (!ends) c.check(written, r.prefix[i] ?? r.rest, items);
  }
  if (!ends && w.rest !== false) c.check(w.rest, r.rest, items);
  compareContains(c, writer, reader, path);
}

/**
 * Whether two `patternProperties` patterns may match one name. Only anchored literal prefixes are told apart
 * (`^S_` and `^I_` never match the same name); anything else may overlap.
 */
export function mayOverlap(a: string, b: string): boolean {
  const prefix = (source: string) => /^\^([A-Za-z0-9_-]*)/.exec(source)?.[1];
  const [x, y] = [prefix(a), prefix(b)];
  return x === undefined || y === undefined || x.startsWith(y) || y.startsWith(x);
}

/** A reader's `contains` needs a writer `contains` whose items pass it, at least as many times (sufficient rule). */
function compareContains(c: Compare, writer: Record<string, unknown>, reader: Record<string, unknown>, path: Path) {
  if (reader.contains === undefined) return;
  const least = (s: Record<string, unknown>) => (typeof s.minContains === 'number' ? s.minContains : 1);
  const most = (s: Record<string, unknown>) => (typeof s.maxContains === 'number' ? s.maxContains : Infinity);
  const ok =
    writer.contains !== undefined &&
    c.fits(writer.contains as JsonNode, reader.contains as JsonNode, path) &&
    least(writer) >= least(reader) &&
    most(writer) <= most(reader) &&
    // with maxContains, items the writer does not count may still match the reader's `contains`: only an equal one
    (reader.maxContains === undefined || JSON.stringify(writer.contains) === JSON.stringify(reader.contains));
  if (!ok)
    c.add(
      path,
      'contains-narrowed',
      `${subject(path)}: \`contains\`/\`minContains\`/\`maxContains\` ask more than before: ${reads(c.direction)} whose arrays do not have such items`,
    );
}

/**
 * `not`: the reader refuses what its `not` accepts, so no writer value may pass it. Sufficient: the writer refuses at
 * least as much (its own `not` accepts all the reader's does), or the writer's types and the `not`'s are disjoint.
 */
export function compareNot(c: Compare, writer: Record<string, unknown>, reader: Record<string, unknown>, path: Path) {
  if (reader.not === undefined) return;
  const refused = reader.not as JsonNode;
  if (writer.not !== undefined && c.fitsReversed(refused, writer.not as JsonNode, path)) return;
  const writerTypes = typesOf(writer);
  const notTypes = typesOf(refused);
  if (writerTypes && notTypes && [...writerTypes].every((t) => !accepts(notTypes, t))) return;
  c.add(
    path,
    'not-narrowed',
    `${subject(path)}: its \`not\` now refuses values the ${c.direction === 'BACKWARD' ? 'old' : 'new'} schema allows: ${reads(c.direction)} that has them`,
  );
}

type Dependency = { kind: 'required'; names: string[] } | { kind: 'schema'; schema: JsonNode };

/** `dependencies` (draft 7) and `dependentRequired` / `dependentSchemas` (2019-09 on), by property name. */
function dependenciesOf(schema: Record<string, unknown>): Map<string, Dependency[]> {
  const found = new Map<string, Dependency[]>();
  const add = (name: string, dependency: Dependency) => found.set(name, [...(found.get(name) ?? []), dependency]);
  const each = (value: unknown, f: (name: string, item: unknown) => void) => {
    if (isObject(value)) for (const [name, item] of Object.entries(value)) f(name, item);
  };
  const either = (name: string, item: unknown) =>
    Array.isArray(item)
      ? add(name, { kind: 'required', names: item as string[] })
      : add(name, { kind: 'schema', schema: item as JsonNode });
  each(schema.dependencies, either);
  each(schema.dependentRequired, either);
  each(schema.dependentSchemas, either);
  return found;
}

/**
 * Each reader dependency must already hold for the writer: the same property names required (by the dependency or by
 * `required`), or a writer dependency schema whose values pass the reader's. A writer that cannot have the property
 * (its schema `false`) has nothing to satisfy. Dependencies the reader drops never refuse anything.
 */
export function compareDependencies(
  c: Compare,
  writer: Record<string, unknown>,
  reader: Record<string, unknown>,
  path: Path,
  writerRequired: Set<string>,
  writerHas: (name: string) => boolean,
) {
  const mine = dependenciesOf(writer);
  for (const [name, needs] of dependenciesOf(reader)) {
    if (!writerHas(name)) continue;
    const given = mine.get(name) ?? [];
    const names = new Set([...writerRequired, ...given.flatMap((d) => (d.kind === 'required' ? d.names : []))]);
    for (const need of needs) {
      const held =
        need.kind === 'required'
          ? need.names.every((n) => names.has(n))
          : acceptsAll(need.schema) || given.some((d) => d.kind === 'schema' && c.fits(d.schema, need.schema, path));
      if (!held)
        c.add(
          at(path, name),
          'dependency-added',
          `${subject(at(path, name))}: a dependency on it (${need.kind === 'required' ? `requires ${need.names.map((n) => `\`${n}\``).join(', ')}` : 'a schema'}) is new or stricter: ${reads(c.direction)} that has \`${name}\``,
        );
    }
  }
}
