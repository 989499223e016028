/**
 * JSON Schema compatibility: does the reader's schema accept every value the writer's schema accepts? A documented
 * subset (docs/schema-evolution.md): types (integer ⊂ number), enum/const, required, properties under open, closed
 * and partially open content models (`additionalProperties`, `patternProperties`), array items by position, anyOf/
 * oneOf branch by branch, allOf part by part, `not`, dependencies, `contains`, numeric/length/count bounds, pattern,
 * format, multipleOf, uniqueItems, local `$ref`. Keywords it does not compare (if/then/else, propertyNames) are
 * reported when they differ, never passed in silence.
 */
import {
  accepts,
  acceptsAll,
  branchesOf,
  conjunctsOf,
  deref,
  describeJson,
  enumOf,
  isObject,
  type JsonDoc,
  type JsonNode,
  mayBe,
  objectModel,
  othersFor,
  sameJson,
  typesOf,
  type Union,
} from './json-schema-doc.ts';
import { type Compare, compareArrays, compareDependencies, compareNot, mayOverlap } from './json-schema-keywords.ts';
import type { Violation } from './violation.ts';
import { at, type Direction, Findings, oldNew, type Path, pathText, roles, rootPath, subject } from './violation.ts';

/** Bounds: a lower bound narrows when it rises, an upper one when it falls. [keyword, side, the type it applies to] */
const bounds = [
  ['minimum', 'lower', 'number'],
  ['exclusiveMinimum', 'lower', 'number'],
  ['maximum', 'upper', 'number'],
  ['exclusiveMaximum', 'upper', 'number'],
  ['minLength', 'lower', 'string'],
  ['maxLength', 'upper', 'string'],
  ['minItems', 'lower', 'array'],
  ['maxItems', 'upper', 'array'],
  ['minProperties', 'lower', 'object'],
  ['maxProperties', 'upper', 'object'],
] as const;

/** Keywords this check does not reason about: any difference is reported for a person to review. */
const uncompared = ['if', 'then', 'else', 'propertyNames'] as const;

/** Keywords whose subschemas evaluate properties and items, which `unevaluated*` then leaves alone. */
const applicators = ['allOf', 'anyOf', 'oneOf', '$ref', 'if', 'dependentSchemas'];
const tangled = (schema: Record<string, unknown>, keyword: string) =>
  keyword in schema && applicators.some((k) => k in schema);

/** Most `check` steps one comparison may take: past it, it stops and reports `too-complex` (the schema is refused). */
const stepBudget = 50_000;

/**
 * What one comparison shares across its trials: steps taken, the outcome of each union trial (writer, reader branch),
 * and node ids for the (writer, reader, path) pairs already compared. Without it nested anyOf was explored 2^depth
 * times, synchronously, behind the registry server.
 */
class Work {
  steps = 0;
  exhausted = false;
  readonly trials = new WeakMap<object, WeakMap<object, boolean>>();
  readonly #ids = new WeakMap<object, number>();
  #next = 0;

  id(node: JsonNode): string {
    if (typeof node === 'boolean') return String(node);
    let id = this.#ids.get(node);
    if (id === undefined) {
      id = this.#next++;
      this.#ids.set(node, id);
    }
    return String(id);
  }

  /** Counts a step; false once the budget is spent. */
  step(): boolean {
    if (this.exhausted) return false;
    if (++this.steps > stepBudget) this.exhausted = true;
    return !this.exhausted;
  }
}

const list = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');
const names = (values: string[]) => values.map((v) => `\`${v}\``).join(' or ');

class Comparison implements Compare {
  readonly direction: Direction;

  constructor(
    private readonly findings: Findings,
    private readonly writerDoc: JsonDoc,
    private readonly readerDoc: JsonDoc,
    /** The (writer, reader) pairs being compared further up: a recursive schema stops there. */
    private readonly inProgress: [JsonNode, JsonNode][] = [],
    private readonly work = new Work(),
    /** (writer, reader, path) already compared into these findings: compared again, it adds the same findings. */
    private readonly done = new Set<string>(),
  ) {
    this.direction = findings.direction;
  }

  /** `whole`: the writer's schema at this path when `writerRaw` is one of its anyOf/oneOf branches (for messages). */
  check(writerRaw: JsonNode, readerRaw: JsonNode, path: Path, whole?: JsonNode): void {
    const writer = deref(this.writerDoc, writerRaw);
    const reader = deref(this.readerDoc, readerRaw);
    if (writer === false || acceptsAll(reader)) return;
    if (this.inProgress.some(([w, r]) => w === writer && r === reader)) return; // recursive schema: on the way
    const key = `${this.work.id(writer)} ${this.work.id(reader)} ${this.work.id(whole ?? true)} ${pathText(path)}`;
    if (this.done.has(key) || !this.work.step()) return;
    this.done.add(key);
    this.inProgress.push([writer, reader]);
    const open = writer === true ? {} : writer;
    if (reader === false) this.typeChanged(whole ?? open, reader, path, 'everything');
    else this.compare(open, reader === true ? {} : reader, path, whole ?? open);
    this.inProgress.pop();
  }

  add(path: Path, rule: string, message: string): void {
    this.findings.add(path, rule, message);
  }

  private compare(writer: Record<string, unknown>, reader: Record<string, unknown>, path: Path, whole: JsonNode): void {
    // unevaluated* is read as additional*, exact only without applicators beside it: otherwise a person looks
    for (const keyword of ['unevaluatedProperties', 'unevaluatedItems'])
      if ((tangled(writer, keyword) || tangled(reader, keyword)) && !sameJson(writer[keyword], reader[keyword]))
        this.findings.add(
          path,
          'not-compared',
          `${subject(path)}: \`${keyword}\` differs beside allOf/anyOf/oneOf/$ref/if, which this check does not compare: review the change by hand`,
        );
    // allOf: every reader part must hold; a writer part (with the writer's other keywords) that fits settles it
    const readerAll = conjunctsOf(this.readerDoc, reader);
    if (readerAll) {
      for (const part of reader.allOf as JsonNode[]) this.check(writer, part, path, whole);
      if (!acceptsAll(readerAll.rest)) this.compare(writer, readerAll.rest, path, whole);
      return;
    }
    const writerAll = conjunctsOf(this.writerDoc, writer);
    if (writerAll) {
      if (writerAll.parts.some((part) => this.fits(part, reader, path))) return;
      this.compare(writerAll.rest, reader, path, whole); // the other keywords alone allow more: a sufficient check
      return;
    }
    const writerUnion = branchesOf(this.writerDoc, writer);
    if (writerUnion) {
      for (const branch of writerUnion.branches) this.check(branch, reader, path, whole);
      return;
    }
    const readerUnion = branchesOf(this.readerDoc, reader);
    if (readerUnion) {
      this.intoUnion(writer, reader, readerUnion, path, whole);
      return;
    }
    const writerTypes = typesOf(writer);
    const readerTypes = typesOf(reader);
    if (readerTypes) {
      const rejected = writerTypes ? [...writerTypes].filter((t) => !accepts(readerTypes, t)) : ['other types'];
      if (rejected.length > 0) this.typeChanged(whole, reader, path, rejected.join(', '));
    }
    const both = (type: string) => mayBe(writerTypes, type) && mayBe(readerTypes, type);
    this.enumValues(writer, reader, path);
    this.constraints(writer, reader, path, both);
    if (both('object')) this.object(writer, reader, path);
    if (both('array')) compareArrays(this, writer, reader, path);
    compareNot(this, writer, reader, path);
    this.uncompared(writer, reader, path);
  }

  /** A writer value must fit one branch of the reader's anyOf/oneOf (oneOf's "exactly one" is not checked). */
  private intoUnion(writer: JsonNode, reader: JsonNode, union: Union, path: Path, whole: JsonNode): void {
    for (const branch of union.branches) if (this.fits(writer, branch, path)) return;
    const { reader: readers } = roles(this.direction);
    this.typeChanged(
      whole,
      reader,
      path,
      `what no branch of its ${union.keyword} accepts`,
      `the ${readers} schema rejects`,
    );
  }

  /** Whether every value of `a` (a reader-side schema) fits `b` (a writer-side one): the roles swapped, for `not`. */
  fitsReversed(a: JsonNode, b: JsonNode, path: Path): boolean {
    const trial = new Findings(this.direction);
    new Comparison(trial, this.readerDoc, this.writerDoc).check(a, b, path);
    return trial.list.length === 0;
  }

  /** Whether every `writer` value fits reader `branch`: tried once per pair, then remembered. */
  fits(writer: JsonNode, branch: JsonNode, path: Path): boolean {
    const resolved = deref(this.readerDoc, branch);
    const memo = isObject(writer) && isObject(resolved) ? this.work.trials.get(writer) : undefined;
    const known = isObject(resolved) ? memo?.get(resolved) : undefined;
    if (known !== undefined) return known;
    const trial = new Findings(this.direction);
    new Comparison(trial, this.writerDoc, this.readerDoc, this.inProgress, this.work).check(writer, branch, path);
    const fits = trial.list.length === 0;
    if (isObject(writer) && isObject(resolved)) {
      const pairs = this.work.trials.get(writer) ?? new WeakMap<object, boolean>();
      pairs.set(resolved, fits);
      this.work.trials.set(writer, pairs);
    }
    return fits;
  }

  /** Adds `too-complex` when the budget ran out (trials then passed unchecked, so nothing else can be trusted). */
  finish(path: Path): void {
    if (!this.work.exhausted) return;
    this.findings.add(
      path,
      'too-complex',
      `the comparison took more than ${stepBudget} steps and was stopped: simplify the schema (nested anyOf/oneOf)`,
    );
  }

  private typeChanged(writer: JsonNode, reader: JsonNode, path: Path, rejected: string, verb?: string): void {
    const { reader: readers } = roles(this.direction);
    const [before, after] = oldNew(
      this.direction,
      describeJson(this.writerDoc, writer),
      describeJson(this.readerDoc, reader),
    );
    this.findings.add(
      path,
      'type-changed',
      `${subject(path)} changed type ${before} → ${after}: ${verb ?? `the ${readers} schema rejects`} ${rejected}`,
    );
  }

  private enumValues(writer: Record<string, unknown>, reader: JsonNode, path: Path): void {
    const allowed = enumOf(reader);
    if (!allowed) return;
    const written = enumOf(writer);
    const backward = this.direction === 'BACKWARD';
    if (!written) {
      this.findings.add(
        path,
        'enum-narrowed',
        backward
          ? `${subject(path)} is now limited to ${list(allowed)}: the new schema rejects other old values`
          : `${subject(path)} was limited to ${list(allowed)} and no longer is: old readers reject other new values`,
      );
      return;
    }
    const missing = written.filter((v) => !allowed.some((a) => sameJson(a, v)));
    if (missing.length === 0) return;
    this.findings.add(
      path,
      backward ? 'enum-value-removed' : 'enum-value-added',
      backward
        ? `${subject(path)} dropped enum value ${list(missing)}: the new schema rejects old data that has it`
        : `${subject(path)} added enum value ${list(missing)}: old readers reject new data that has it`,
    );
  }

  private constraints(
    writer: Record<string, unknown>,
    reader: Record<string, unknown>,
    path: Path,
    both: (type: string) => boolean,
  ): void {
    const narrowed = (keyword: string) => {
      const [before, after] = oldNew(this.direction, writer[keyword], reader[keyword]);
      const { reader: readers, writer: writers } = roles(this.direction);
      this.findings.add(
        path,
        'constraint-narrowed',
        `${subject(path)}: \`${keyword}\` ${JSON.stringify(before) ?? 'none'} → ${JSON.stringify(after) ?? 'none'}: the ${readers} schema rejects values the ${writers} one allows`,
      );
    };
    for (const [keyword, side, type] of bounds) {
      const limit = reader[keyword];
      if (!both(type) || limit === undefined) continue;
      const was = writer[keyword];
      if (typeof limit !== 'number' || (was !== undefined && typeof was !== 'number')) {
        if (!sameJson(was, limit)) narrowed(keyword); // draft-4 boolean exclusiveMinimum/Maximum: equal or reported
      } else if (was === undefined || (side === 'lower' ? was < limit : was > limit)) narrowed(keyword);
    }
    const string = both('string');
    if (string && reader.pattern !== undefined && reader.pattern !== writer.pattern) narrowed('pattern');
    if (reader.format !== undefined && reader.format !== writer.format) narrowed('format');
    const step = reader.multipleOf;
    if (both('number') && typeof step === 'number') {
      const was = writer.multipleOf;
      if (typeof was !== 'number' || !Number.isInteger(was / step)) narrowed('multipleOf');
    }
    if (both('array') && reader.uniqueItems === true && writer.uniqueItems !== true) narrowed('uniqueItems');
  }

  private object(writer: Record<string, unknown>, reader: Record<string, unknown>, path: Path): void {
    const w = objectModel(writer);
    const r = objectModel(reader);
    const onlyWriter = Object.keys(w.properties).filter((p) => !(p in r.properties));
    const onlyReader = Object.keys(r.properties).filter((p) => !(p in w.properties));
    const backward = this.direction === 'BACKWARD';
    for (const name of r.required) {
      if (w.required.has(name)) continue;
      const where = subject(at(path, name));
      const known = name in w.properties;
      const renamed = !known && onlyWriter.length > 0;
      let message: string;
      if (backward)
        message = known
          ? `${where} became required: old data may lack it`
          : `${where} added as required: old data does not have it${renamed ? ` (if it renames ${names(onlyWriter)}: JSON Schema has no aliases, keep the old field until old data is gone)` : ''}`;
      else
        message = known
          ? `${where} is no longer required, but the old schema requires it: old readers reject new data that lacks it`
          : `${where} removed, but the old schema requires it: old readers reject new data${renamed ? ` (renamed to ${names(onlyWriter)}? old readers still look for \`${name}\`)` : ''}`;
      this.findings.add(at(path, name), backward ? 'required-added' : 'required-removed', message);
    }
    for (const [name, schema] of Object.entries(r.properties)) {
      const here = at(path, name);
      const written = name in w.properties ? w.properties[name]! : othersFor(w, name)[0]!;
      if (name in w.properties) this.check(written, schema, here);
      else if (written === false || r.required.has(name)) {
        // never written (closed writer), or already reported as required
      } else if (!acceptsAll(deref(this.writerDoc, written))) this.check(written, schema, here);
      else if (!acceptsAll(deref(this.readerDoc, schema)))
        this.findings.add(
          here,
          backward ? 'property-added-to-open-model' : 'property-removed-from-open-model',
          backward
            ? `${subject(here)} added to an open content model: old data may already hold \`${name}\` with any value, which the new schema constrains (close the old model with "additionalProperties": false, or accept any value)`
            : `${subject(here)} removed from an open content model: new data may hold \`${name}\` with any value, which the old schema constrains`,
        );
    }
    for (const name of onlyWriter) {
      const here = at(path, name);
      if (deref(this.writerDoc, w.properties[name]!) === false) continue; // never written
      const readers = othersFor(r, name);
      if (readers.some((schema) => schema !== false))
        for (const schema of readers) this.check(w.properties[name]!, schema, here);
      else
        this.findings.add(
          here,
          backward ? 'property-removed-from-closed-model' : 'property-added-to-closed-model',
          backward
            ? `${subject(here)} removed from a closed content model: the new schema rejects old data that has it${onlyReader.length > 0 ? ` (renamed to ${names(onlyReader)}? JSON Schema has no aliases)` : ''}`
            : `${subject(here)} added, but the old schema's content model is closed ("additionalProperties": false): old readers reject new data that has it`,
        );
    }
    compareDependencies(this, writer, reader, path, w.required, (name) => {
      const schema = name in w.properties ? w.properties[name]! : othersFor(w, name)[0]!;
      return deref(this.writerDoc, schema) !== false;
    });
    // names matching a writer pattern: every reader pattern that may match them too, and unless the reader has the
    // same pattern, what it gives other names
    for (const [source, , schema] of w.patterns) {
      for (const [other, , readerSchema] of r.patterns)
        if (mayOverlap(source, other)) this.check(schema, readerSchema, at(path, '{}'));
      if (!r.patterns.some(([other]) => other === source)) this.checkOthers(schema, r.additional, path);
    }
    if (w.additional === false) return;
    // other writer names may match a reader pattern (one the writer has too never holds them)
    for (const [source, , schema] of r.patterns)
      if (!w.patterns.some(([mine]) => mine === source)) this.check(w.additional, schema, at(path, '{}'));
    this.checkOthers(w.additional, r.additional, path);
  }

  /** Values of properties the schemas do not name, writer → reader. */
  private checkOthers(writer: JsonNode, reader: JsonNode, path: Path): void {
    const backward = this.direction === 'BACKWARD';
    if (deref(this.writerDoc, writer) === false) return;
    if (reader !== false) this.check(writer, reader, at(path, '{}'));
    else
      this.findings.add(
        path,
        backward ? 'content-model-closed' : 'content-model-opened',
        backward
          ? `${subject(path)} closes its content model ("additionalProperties": false): the new schema rejects old data with other properties`
          : `${subject(path)} opens the content model the old schema closes: old readers reject new data with other properties`,
      );
  }

  private uncompared(writer: Record<string, unknown>, reader: Record<string, unknown>, path: Path): void {
    const keywords: string[] = uncompared.filter((k) => k in reader && !sameJson(writer[k], reader[k]));
    for (const keyword of keywords)
      this.findings.add(
        path,
        'not-compared',
        `${subject(path)}: \`${keyword}\` differs, and this check does not compare it: review the change by hand`,
      );
  }
}

/** Every violation found reading values valid under `writer` with `reader`. */
export function compareJsonSchemas(writer: JsonDoc, reader: JsonDoc, direction: Direction): Violation[] {
  const findings = new Findings(direction);
  const title = isObject(reader.root) && typeof reader.root.title === 'string' ? reader.root.title : 'schema';
  const comparison = new Comparison(findings, writer, reader);
  comparison.check(writer.root, reader.root, rootPath(title));
  comparison.finish(rootPath(title));
  return findings.list;
}
