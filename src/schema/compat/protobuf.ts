/**
 * Protobuf compatibility: can a reader built from one `.proto` file decode what a writer built from another wrote?
 * Protobuf matches fields by number, never by name, so the rules are about numbers and wire types: a field number
 * reused for another type, a field renumbered, a type changed outside its wire-compatible group, a list read as one
 * value (repeated → singular), fields the writer may set together grouped in a reader's `oneof`, a `required` field the reader needs and the
 * writer lacks, and a message or enum of the file removed or moved to another package. A renamed field (same
 * number, compatible type) decodes the same and is not a violation; it changes the JSON mapping and is reported as a
 * note (`renames`).
 */
import protobuf from 'protobufjs';
import { type ProtoFile, parseProto } from '../protobuf/proto-file.ts';
import type { Violation } from './violation.ts';
import { at, consequence, type Direction, Findings, oldNew, type Path, roles, rootPath } from './violation.ts';

export { parseProto };

/** Scalar types that read each other's bytes (the Protobuf language guide's "Updating A Message Type"). */
const wireGroups: readonly (readonly string[])[] = [
  ['int32', 'uint32', 'int64', 'uint64', 'bool', 'enum'],
  ['sint32', 'sint64'],
  ['string', 'bytes'],
  ['fixed32', 'sfixed32'],
  ['fixed64', 'sfixed64'],
  ['float'],
  ['double'],
];

/** Every message and enum in the root by full name (no leading dot), the well-known types left out. */
function typesIn(root: protobuf.Root): Map<string, protobuf.Type | protobuf.Enum> {
  const found = new Map<string, protobuf.Type | protobuf.Enum>();
  const visit = (namespace: protobuf.NamespaceBase) => {
    for (const item of namespace.nestedArray) {
      if (item.fullName.startsWith('.google.protobuf')) continue;
      if (item instanceof protobuf.Type || item instanceof protobuf.Enum) found.set(item.fullName.slice(1), item);
      if (item instanceof protobuf.Namespace || item instanceof protobuf.Type) visit(item);
    }
  };
  visit(root);
  return found;
}

/** The type of a field as compared: a scalar's name, `enum`, or `message <full name>`. */
function typeOf(field: protobuf.Field): string {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return 'enum';
  if (resolved instanceof protobuf.Type) return `message ${resolved.fullName.slice(1)}`;
  return field.type;
}

/** `string`, `repeated int32`, `map<string, shop.Seat>`, `enum shop.Kind`. */
function describe(field: protobuf.Field): string {
  const resolved = field.resolvedType;
  const type = resolved ? resolved.fullName.slice(1) : field.type;
  if (field instanceof protobuf.MapField) return `map<${field.keyType}, ${type}>`;
  const kind = resolved instanceof protobuf.Enum ? `enum ${type}` : type;
  return field.repeated ? `repeated ${kind}` : kind;
}

function sameWireType(writer: protobuf.Field, reader: protobuf.Field): boolean {
  if (writer instanceof protobuf.MapField || reader instanceof protobuf.MapField) {
    if (!(writer instanceof protobuf.MapField && reader instanceof protobuf.MapField)) return false;
    if (writer.keyType !== reader.keyType) return false;
  }
  const [w, r] = [typeOf(writer), typeOf(reader)];
  if (w === r) return true;
  return wireGroups.some((group) => group.includes(w) && group.includes(r));
}

const label = (field: protobuf.Field) =>
  field instanceof protobuf.MapField ? 'map' : field.repeated ? 'repeated' : 'singular';

/** The field's oneof; none for proto3 `optional`, whose one-field oneof (`_name`) protobufjs makes up for presence. */
const oneofOf = (field: protobuf.Field) => (field.options?.proto3_optional ? undefined : field.partOf?.name);

/** One message's fields, writer against reader. */
function compareMessage(writer: protobuf.Type, reader: protobuf.Type, findings: Findings): void {
  const { direction } = findings;
  const root = rootPath(writer.fullName.slice(1));
  const { writer: w, reader: r } = roles(direction);
  for (const wf of writer.fieldsArray) {
    const rf = reader.fieldsById[wf.id];
    const path = at(root, wf.name);
    if (!rf) {
      const moved = reader.fields[wf.name];
      if (moved) {
        const [before, after] = oldNew(direction, wf.id, moved.id);
        findings.add(
          path,
          'field-renumbered',
          `field \`${wf.name}\` is number ${before} in old and ${after} in new: the ${r} reader reads ${w} data's field ${wf.id} as an unknown field and never sees \`${wf.name}\` (${consequence(direction)}); keep a field's number for ever`,
        );
      }
      continue;
    }
    if (!sameWireType(wf, rf)) {
      const [before, after] = oldNew(direction, wf, rf);
      if (wf.name !== rf.name) {
        findings.add(
          path,
          'field-number-reused',
          `field number ${wf.id} was \`${before.name}\` (${describe(before)}) in old and is \`${after.name}\` (${describe(after)}) in new: a number reused for another field reads one's bytes as the other (${consequence(direction)}); give the new field a new number and \`reserved ${wf.id};\` the old one`,
        );
      } else {
        findings.add(
          path,
          'type-changed',
          `field \`${wf.name}\` (${wf.id}) changed from ${describe(before)} to ${describe(after)}, outside one wire-compatible group (${consequence(direction)})`,
        );
      }
      continue;
    }
    // a list reader takes a single value as a list of one; a single-value reader keeps the last of a list
    if (label(wf) !== label(rf) && label(rf) === 'singular') {
      const [before, after] = oldNew(direction, wf, rf);
      findings.add(
        path,
        'label-changed',
        `field \`${rf.name}\` (${wf.id}) changed from ${label(before)} to ${label(after)} (${describe(before)} → ${describe(after)}): a reader of one value keeps only the last of a list, and a packed list does not decode as one number (${consequence(direction)})`,
      );
    }
    if (rf.required && !wf.required) {
      findings.add(
        path,
        'field-made-required',
        `field \`${rf.name}\` (${wf.id}) is required in ${r} and optional in ${w}: ${w} data without it fails to decode (${consequence(direction)})`,
      );
    }
  }
  compareOneofs(writer, reader, findings);
  for (const rf of reader.fieldsArray) {
    if (!rf.required || writer.fieldsById[rf.id]) continue;
    const what =
      direction === 'BACKWARD'
        ? `new adds required field \`${rf.name}\` (${rf.id}): old data does not carry it and fails to decode`
        : `required field \`${rf.name}\` (${rf.id}) was removed: old readers refuse new data without it`;
    findings.add(at(root, rf.name), 'required-field-missing', `${what} (${consequence(direction)})`);
  }
}

/**
 * A reader's oneof keeps one of its fields: it must not group fields the writer may set together (fields that are not
 * in one and the same writer oneof). So moving fields into a oneof breaks readers of the data written before
 * (BACKWARD), moving one out breaks readers of the oneof (FORWARD), and a single field into a new oneof, a field added
 * to one, or a oneof renamed (names are not on the wire) break nothing.
 */
function compareOneofs(writer: protobuf.Type, reader: protobuf.Type, findings: Findings): void {
  const { direction } = findings;
  const { writer: w, reader: r } = roles(direction);
  for (const oneof of reader.oneofsArray) {
    const written = oneof.fieldsArray.filter((f) => !f.options?.proto3_optional && writer.fieldsById[f.id]);
    const groups = new Set(written.map((f) => oneofOf(writer.fieldsById[f.id] as protobuf.Field) ?? `#${f.id}`));
    if (groups.size < 2) continue;
    const names = written.map((f) => `\`${f.name}\``).join(', ');
    findings.add(
      at(rootPath(reader.fullName.slice(1)), oneof.name),
      'oneof-changed',
      `fields ${names} are in one oneof \`${oneof.name}\` in ${r} but may be set together in ${w}: a reader of the oneof keeps only the last of them (${consequence(direction)})`,
    );
  }
}

/** Where a type of the same short name went, for a "moved" message. */
function movedTo(name: string, reader: Map<string, protobuf.Type | protobuf.Enum>): string | undefined {
  const short = name.split('.').at(-1);
  return [...reader.keys()].find((other) => other !== name && other.split('.').at(-1) === short);
}

/** Checks that `reader` decodes what `writer` encodes. */
export function compareProtobuf(writer: ProtoFile, reader: ProtoFile, direction: Direction): Violation[] {
  const findings = new Findings(direction);
  const writerTypes = typesIn(writer.root);
  const readerTypes = typesIn(reader.root);
  const record = writer.messages[0];
  for (const [name, type] of writerTypes) {
    const other = readerTypes.get(name);
    const kind = type instanceof protobuf.Type ? 'message' : 'enum';
    // old's types must all stay (old data may use any); new's record type must be one old readers know
    if (!other && (direction === 'BACKWARD' || name === record) && ownType(writer, name)) {
      const moved = movedTo(name, readerTypes);
      findings.add(
        rootPath(name),
        direction === 'BACKWARD' ? `${kind}-removed` : 'record-message-unknown',
        direction === 'BACKWARD'
          ? `${kind} \`${name}\` of old is not in new${moved ? ` (moved to \`${moved}\`: another package is another type)` : ''}: old data that uses it cannot be read`
          : `new's record message \`${name}\` is not in old${moved ? ` (old has \`${moved}\`: another package is another type)` : ''}: old readers cannot read new data`,
      );
      continue;
    }
    if (other instanceof protobuf.Type && type instanceof protobuf.Type) compareMessage(type, other, findings);
    else if (other && kind !== (other instanceof protobuf.Type ? 'message' : 'enum'))
      findings.add(
        rootPath(name),
        'kind-changed',
        `\`${name}\` is a ${kind} in ${roles(direction).writer} and not in ${roles(direction).reader} (${consequence(direction)})`,
      );
  }
  return findings.list;
}

/** Whether a type is declared in the file itself (its package), not only in an import. */
function ownType(file: ProtoFile, name: string): boolean {
  return file.messages.some((top) => name === top || name.startsWith(`${top}.`)) || isTopEnum(file, name);
}

function isTopEnum(file: ProtoFile, name: string): boolean {
  const type = file.root.lookup(name);
  return type instanceof protobuf.Enum && type.parent?.fullName.slice(1) === file.package;
}

/** Fields renamed (same number, same wire type, another name): not a wire break, a JSON mapping break. */
export function protobufRenames(old: ProtoFile, next: ProtoFile): Violation[] {
  const findings = new Findings('BACKWARD');
  const nextTypes = typesIn(next.root);
  for (const [name, type] of typesIn(old.root)) {
    const other = nextTypes.get(name);
    if (!(type instanceof protobuf.Type && other instanceof protobuf.Type)) continue;
    for (const field of type.fieldsArray) {
      const renamed = other.fieldsById[field.id];
      if (!renamed || renamed.name === field.name || !sameWireType(field, renamed)) continue;
      findings.add(
        at(rootPath(name), field.name) as Path,
        'field-renamed',
        `field ${field.id} renamed from \`${field.name}\` to \`${renamed.name}\`: the binary encoding is unchanged, but its JSON name changes (JSON written with one name is not read by the other), and code that names the field must change`,
      );
    }
  }
  return findings.list;
}
