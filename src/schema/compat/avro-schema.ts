/**
 * Parses an Avro schema (its JSON form, Avro 1.11) into a graph the resolution check walks: named types are defined
 * once and every later reference by name points at the same object (so recursive records are cycles). Rejects what
 * the specification forbids with EFF_SCHEMA_INVALID: unknown or redefined names, bad names, duplicate fields or
 * symbols, nested or ambiguous unions, non-positive fixed sizes, and defaults that do not match their type.
 */
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

export const primitives = ['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'] as const;
export type Primitive = (typeof primitives)[number];

export interface AvroField {
  name: string;
  aliases: string[];
  type: AvroType;
  hasDefault: boolean;
}
interface Named {
  /** The full name, e.g. `boxoffice.OrderConfirmed`. */
  name: string;
  /** Full names this type was known by before. */
  aliases: string[];
}
export interface AvroRecord extends Named {
  kind: 'record';
  fields: AvroField[];
}
export interface AvroEnum extends Named {
  kind: 'enum';
  symbols: string[];
  default?: string;
}
export interface AvroFixed extends Named {
  kind: 'fixed';
  size: number;
}
export type AvroNamed = AvroRecord | AvroEnum | AvroFixed;
export type AvroType =
  | { kind: 'primitive'; name: Primitive }
  | AvroNamed
  | { kind: 'array'; items: AvroType }
  | { kind: 'map'; values: AvroType }
  | { kind: 'union'; branches: AvroType[] };

const invalid = (message: string) =>
  new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, `invalid Avro schema: ${message}`);
const namePart = /^[A-Za-z_][A-Za-z0-9_]*$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown): v is Primitive => (primitives as readonly unknown[]).includes(v);

export const shortName = (fullName: string): string => fullName.slice(fullName.lastIndexOf('.') + 1);

function fullName(name: unknown, namespace: string, where: string): string {
  if (typeof name !== 'string') throw invalid(`${where}: \`name\` must be a string`);
  const full = name.includes('.') || namespace === '' ? name : `${namespace}.${name}`;
  if (!full.split('.').every((part) => namePart.test(part))) throw invalid(`${where}: \`${name}\` is not a valid name`);
  return full;
}

function aliasesOf(raw: unknown, namespace: string, where: string): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw invalid(`${where}: \`aliases\` must be an array of names`);
  return raw.map((alias) => fullName(alias, namespace, where));
}

/** Parses one schema; throws EffectivelyError(EFF_SCHEMA_INVALID) when it is not valid Avro. */
export function parseAvro(schema: unknown): AvroType {
  const named = new Map<string, AvroNamed>();

  const define = <T extends AvroNamed>(type: T): T => {
    if (isPrimitive(shortName(type.name)) && !type.name.includes('.'))
      throw invalid(`\`${type.name}\` cannot name a type: it is a primitive`);
    if (named.has(type.name)) throw invalid(`\`${type.name}\` is defined twice`);
    named.set(type.name, type);
    return type;
  };

  const parse = (raw: unknown, namespace: string, where: string): AvroType => {
    if (typeof raw === 'string') {
      if (isPrimitive(raw)) return { kind: 'primitive', name: raw };
      const found = (!raw.includes('.') && namespace !== '' && named.get(`${namespace}.${raw}`)) || named.get(raw);
      if (!found) throw invalid(`${where}: unknown type \`${raw}\` (a named type must be defined before it is used)`);
      return found;
    }
    if (Array.isArray(raw)) return union(raw, namespace, where);
    if (!isObject(raw)) throw invalid(`${where}: expected a type name, an object or an array (union)`);
    const type = raw.type;
    switch (type) {
      case 'record':
      case 'error':
        return record(raw, namespace, where);
      case 'enum': {
        const name = fullName(raw.name, typeof raw.namespace === 'string' ? raw.namespace : namespace, where);
        const symbols = raw.symbols;
        if (!Array.isArray(symbols) || !symbols.every((s) => typeof s === 'string' && namePart.test(s)))
          throw invalid(`enum \`${name}\`: \`symbols\` must be an array of names`);
        if (new Set(symbols).size !== symbols.length) throw invalid(`enum \`${name}\`: duplicate symbols`);
        if (raw.default !== undefined && !symbols.includes(raw.default))
          throw invalid(`enum \`${name}\`: default \`${String(raw.default)}\` is not one of its symbols`);
        return define<AvroEnum>({
          kind: 'enum',
          name,
          aliases: aliasesOf(raw.aliases, namespaceOf(name), where),
          symbols: symbols as string[],
          ...(raw.default === undefined ? {} : { default: raw.default as string }),
        });
      }
      case 'fixed': {
        const name = fullName(raw.name, typeof raw.namespace === 'string' ? raw.namespace : namespace, where);
        if (!Number.isInteger(raw.size) || (raw.size as number) < 0)
          throw invalid(`fixed \`${name}\`: \`size\` must be a non-negative integer`);
        return define<AvroFixed>({
          kind: 'fixed',
          name,
          aliases: aliasesOf(raw.aliases, namespaceOf(name), where),
          size: raw.size as number,
        });
      }
      case 'array':
        return { kind: 'array', items: parse(raw.items, namespace, `${where}[]`) };
      case 'map':
        return { kind: 'map', values: parse(raw.values, namespace, `${where}{}`) };
      default:
        // {"type": "string", "logicalType": ...} and {"type": "SomeNamedType"}: the type itself.
        if (typeof type === 'string' || Array.isArray(type)) return parse(type, namespace, where);
        throw invalid(`${where}: missing or unknown \`type\``);
    }
  };

  const record = (raw: Record<string, unknown>, namespace: string, where: string): AvroRecord => {
    const name = fullName(raw.name, typeof raw.namespace === 'string' ? raw.namespace : namespace, where);
    const inner = namespaceOf(name);
    const type = define<AvroRecord>({ kind: 'record', name, aliases: aliasesOf(raw.aliases, inner, name), fields: [] });
    if (!Array.isArray(raw.fields)) throw invalid(`record \`${name}\`: \`fields\` must be an array`);
    for (const field of raw.fields) {
      if (!isObject(field) || typeof field.name !== 'string' || !namePart.test(field.name))
        throw invalid(`record \`${name}\`: every field needs a valid \`name\``);
      if (type.fields.some((f) => f.name === field.name))
        throw invalid(`record \`${name}\`: field \`${field.name}\` appears twice`);
      const fieldType = parse(field.type, inner, `${shortName(name)}.${field.name}`);
      const hasDefault = 'default' in field;
      if (hasDefault && !matchesDefault(fieldType, field.default))
        throw invalid(
          `field \`${shortName(name)}.${field.name}\`: default ${JSON.stringify(field.default)} does not match its type` +
            (fieldType.kind === 'union' ? ' (a union default must match the union’s first branch)' : ''),
        );
      if (
        field.aliases !== undefined &&
        !(Array.isArray(field.aliases) && field.aliases.every((a) => typeof a === 'string'))
      )
        throw invalid(`field \`${shortName(name)}.${field.name}\`: \`aliases\` must be an array of names`);
      type.fields.push({
        name: field.name,
        aliases: (field.aliases as string[] | undefined) ?? [],
        type: fieldType,
        hasDefault,
      });
    }
    return type;
  };

  const union = (raw: unknown[], namespace: string, where: string): AvroType => {
    const branches = raw.map((b, i) => parse(b, namespace, `${where}<${i}>`));
    const keys = new Set<string>();
    for (const branch of branches) {
      if (branch.kind === 'union') throw invalid(`${where}: a union cannot hold another union directly`);
      const key = branch.kind === 'primitive' ? branch.name : 'name' in branch ? branch.name : branch.kind;
      if (keys.has(key)) throw invalid(`${where}: the union holds \`${key}\` twice`);
      keys.add(key);
    }
    return { kind: 'union', branches };
  };

  return parse(schema, '', 'schema');
}

function namespaceOf(fullName: string): string {
  const dot = fullName.lastIndexOf('.');
  return dot < 0 ? '' : fullName.slice(0, dot);
}

/** Whether a field's default value fits its type (for a union: its first branch). */
function matchesDefault(type: AvroType, value: unknown): boolean {
  switch (type.kind) {
    case 'primitive':
      switch (type.name) {
        case 'null':
          return value === null;
        case 'boolean':
          return typeof value === 'boolean';
        case 'int':
        case 'long':
          return Number.isInteger(value);
        case 'float':
        case 'double':
          return typeof value === 'number' || value === 'NaN' || value === 'Infinity' || value === '-Infinity';
        default:
          return typeof value === 'string';
      }
    case 'record':
      return (
        isObject(value) &&
        type.fields.every((f) => (f.name in value ? matchesDefault(f.type, value[f.name]) : f.hasDefault))
      );
    case 'enum':
      return typeof value === 'string' && type.symbols.includes(value);
    case 'fixed':
      return typeof value === 'string' && value.length === type.size;
    case 'array':
      return Array.isArray(value) && value.every((v) => matchesDefault(type.items, v));
    case 'map':
      return isObject(value) && Object.values(value).every((v) => matchesDefault(type.values, v));
    case 'union':
      return type.branches[0] !== undefined && matchesDefault(type.branches[0], value);
  }
}
