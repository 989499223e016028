/**
 * Avro schema resolution (specification 1.11, "Schema Resolution"): can data written with the writer's schema be read
 * with the reader's? Each rule that fails becomes one violation in words: promotions (int → long → float → double,
 * string ↔ bytes), records matched by name or reader alias, fields by name or reader field alias, reader-only fields
 * need a default, enum symbols (or the reader's enum default), fixed names and sizes, arrays and maps by their items,
 * unions branch by branch. Logical types are ignored, as in resolution.
 */
import type { AvroField, AvroNamed, AvroRecord, AvroType } from './avro-schema.ts';
import { shortName } from './avro-schema.ts';
import type { Violation } from './violation.ts';
import { at, consequence, type Direction, Findings, oldNew, type Path, roles, rootPath, subject } from './violation.ts';

const promotions: Record<string, readonly string[]> = {
  int: ['long', 'float', 'double'],
  long: ['float', 'double'],
  float: ['double'],
  string: ['bytes'],
  bytes: ['string'],
};

/** `int`, `record Customer`, `fixed Hash(16)`, `array<string>`, `union [null, string]`. */
export function describe(type: AvroType): string {
  switch (type.kind) {
    case 'primitive':
      return type.name;
    case 'fixed':
      return `fixed ${shortName(type.name)}(${type.size})`;
    case 'record':
    case 'enum':
      return `${type.kind} ${shortName(type.name)}`;
    case 'array':
      return `array<${describe(type.items)}>`;
    case 'map':
      return `map<${describe(type.values)}>`;
    case 'union':
      return `union [${type.branches.map(describe).join(', ')}]`;
  }
}

const names = (fields: string[]) => fields.map((f) => `\`${f}\``).join(' or ');

const isNamed = (type: AvroType): type is AvroNamed =>
  type.kind === 'record' || type.kind === 'enum' || type.kind === 'fixed';

/** Same unqualified name (the specification's rule), or the writer's name among the reader's aliases. */
const namesMatch = (writer: AvroNamed, reader: AvroNamed): boolean =>
  shortName(writer.name) === shortName(reader.name) ||
  reader.aliases.some((alias) => alias === writer.name || shortName(alias) === shortName(writer.name));

/** Whether a (non-union) writer type resolves to a (non-union) reader type at this level; the insides come later. */
function matches(writer: AvroType, reader: AvroType): boolean {
  if (writer.kind === 'primitive' && reader.kind === 'primitive')
    return writer.name === reader.name || (promotions[writer.name]?.includes(reader.name) ?? false);
  if (writer.kind !== reader.kind) return false;
  if (writer.kind === 'fixed' && reader.kind === 'fixed')
    return namesMatch(writer, reader) && writer.size === reader.size;
  if (isNamed(writer) && isNamed(reader)) return namesMatch(writer, reader);
  return true;
}

/** The same type without promotion: same primitive, same full name, or both arrays / both maps. */
function identical(writer: AvroType, reader: AvroType): boolean {
  if (writer.kind !== reader.kind) return false;
  if (writer.kind === 'primitive' && reader.kind === 'primitive') return writer.name === reader.name;
  if (isNamed(writer) && isNamed(reader)) return writer.name === reader.name;
  return true;
}

/** The reader union's branch a writer type resolves to: an identical one first, else the first that matches. */
const select = (writer: AvroType, branches: AvroType[]): AvroType | undefined =>
  branches.find((b) => identical(writer, b)) ?? branches.find((b) => matches(writer, b));

class Resolution {
  private readonly inProgress: [AvroRecord, AvroRecord][] = [];

  constructor(private readonly findings: Findings) {}

  check(writer: AvroType, reader: AvroType, path: Path): void {
    if (writer.kind === 'union') for (const branch of writer.branches) this.resolve(branch, reader, writer, path);
    else this.resolve(writer, reader, writer, path);
  }

  /** One non-union writer type (`whole` is the writer's full type here, a union when it came from one). */
  private resolve(writer: AvroType, reader: AvroType, whole: AvroType, path: Path): void {
    const candidates = reader.kind === 'union' ? reader.branches : [reader];
    const target = reader.kind === 'union' ? select(writer, candidates) : matches(writer, reader) ? reader : undefined;
    if (target) {
      this.inside(writer, target, path);
      return;
    }
    if (isNamed(writer)) {
      // A named type of the same kind and name (a fixed that changed size), or the only one of its kind (renamed).
      const sameKind = candidates.filter((c): c is AvroNamed => c.kind === writer.kind);
      const near = sameKind.find((c) => namesMatch(writer, c)) ?? (sameKind.length === 1 ? sameKind[0] : undefined);
      if (near) {
        this.namedDiffers(writer, near, path);
        return;
      }
    }
    const { reader: readers } = roles(this.findings.direction);
    const [before, after] = oldNew(this.findings.direction, describe(whole), describe(reader));
    const as = reader.kind === 'union' ? `any of ${reader.branches.map(describe).join(', ')}` : describe(reader);
    this.findings.add(
      path,
      'type-changed',
      `${subject(path)} changed type ${before} → ${after}: ${readers} readers cannot read ${describe(writer)} as ${as}`,
    );
  }

  /** Two named types of the same kind that do not resolve: renamed without an alias, or a fixed that changed size. */
  private namedDiffers(writer: AvroNamed, reader: AvroNamed, path: Path): void {
    const direction = this.findings.direction;
    const [before, after] = oldNew(direction, writer, reader);
    if (writer.kind === 'fixed' && reader.kind === 'fixed' && namesMatch(writer, reader)) {
      const [sizeBefore, sizeAfter] = oldNew(direction, writer.size, reader.size);
      this.findings.add(
        path,
        'fixed-size-changed',
        `${subject(path)}: fixed ${shortName(reader.name)} changed size ${sizeBefore} → ${sizeAfter} bytes: ${consequence(direction)}`,
      );
      return;
    }
    const hint =
      direction === 'BACKWARD'
        ? `list \`${before.name}\` in the new ${after.kind}'s \`aliases\``
        : `old readers know it only as \`${before.name}\``;
    this.findings.add(
      path,
      'name-changed',
      `${subject(path)}: ${after.kind} renamed ${shortName(before.name)} → ${shortName(after.name)}: ${consequence(direction)} (${hint})`,
    );
  }

  /** The insides of two types that resolve at their own level. */
  private inside(writer: AvroType, reader: AvroType, path: Path): void {
    if (writer.kind === 'record' && reader.kind === 'record') this.record(writer, reader, path);
    else if (writer.kind === 'enum' && reader.kind === 'enum') this.enumSymbols(writer.symbols, reader, path);
    else if (writer.kind === 'array' && reader.kind === 'array') this.check(writer.items, reader.items, at(path, '[]'));
    else if (writer.kind === 'map' && reader.kind === 'map') this.check(writer.values, reader.values, at(path, '{}'));
  }

  private record(writer: AvroRecord, reader: AvroRecord, path: Path): void {
    if (this.inProgress.some(([w, r]) => w === writer && r === reader)) return; // recursive type: already on the way
    this.inProgress.push([writer, reader]);
    const read = new Set<AvroField>();
    const missing: AvroField[] = [];
    for (const field of reader.fields) {
      const source =
        writer.fields.find((f) => f.name === field.name) ?? writer.fields.find((f) => field.aliases.includes(f.name));
      if (source) {
        read.add(source);
        this.check(source.type, field.type, at(path, field.name));
      } else if (!field.hasDefault) missing.push(field);
    }
    const unread = writer.fields.filter((f) => !read.has(f)).map((f) => f.name);
    for (const field of missing) this.missingField(field, unread, at(path, field.name));
    this.inProgress.pop();
  }

  /** A reader field the writer does not have, and no default to fill it in. */
  private missingField(field: AvroField, unread: string[], path: Path): void {
    if (this.findings.direction === 'BACKWARD') {
      const hint =
        unread.length === 0
          ? ''
          : unread.length === 1
            ? ` (a rename needs an alias: if it replaces \`${unread[0]}\`, give it "aliases": ["${unread[0]}"])`
            : ` (a rename needs an alias: if it replaces one of ${names(unread)}, list the old name in its "aliases")`;
      this.findings.add(
        path,
        'field-added-without-default',
        `${subject(path)} added without a default: old data cannot be read${hint}`,
      );
    } else {
      const hint =
        unread.length === 0 ? '' : ` (renamed to ${names(unread)}? old readers still look for \`${field.name}\`)`;
      this.findings.add(
        path,
        'field-removed-without-default',
        `${subject(path)} removed, and the old schema gives it no default: old readers cannot read new data${hint}`,
      );
    }
  }

  private enumSymbols(written: string[], reader: AvroType & { kind: 'enum' }, path: Path): void {
    const unknown = written.filter((s) => !reader.symbols.includes(s));
    if (unknown.length === 0 || reader.default !== undefined) return;
    const name = shortName(reader.name);
    const symbols = unknown.join(', ');
    if (this.findings.direction === 'BACKWARD')
      this.findings.add(
        path,
        'enum-symbol-removed',
        `${subject(path)}: enum ${name} dropped ${symbols} and has no \`default\`: old data cannot be read`,
      );
    else
      this.findings.add(
        path,
        'enum-symbol-added',
        `${subject(path)}: enum ${name} gained ${symbols}, and the old enum has no \`default\`: old readers cannot read new data`,
      );
  }
}

/** Every violation found reading data written with `writer` through `reader`. */
export function resolveAvro(writer: AvroType, reader: AvroType, direction: Direction): Violation[] {
  const findings = new Findings(direction);
  const root = isNamed(reader) ? shortName(reader.name) : 'schema';
  new Resolution(findings).check(writer, reader, rootPath(root));
  return findings.list;
}
