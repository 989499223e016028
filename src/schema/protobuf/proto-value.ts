/**
 * Does a plain value fit a Protobuf message? protobufjs' `fromObject` converts what it can and drops the rest in
 * silence (an unknown field, a string where a number belongs), so the serde checks first and refuses with the path:
 * a value the schema does not describe is the producer's bug, never a record that quietly loses a field.
 */
import protobuf from 'protobufjs';

const int32 = [-(2 ** 31), 2 ** 31 - 1] as const;
const uint32 = [0, 2 ** 32 - 1] as const;
const ranges: Record<string, readonly [number, number]> = {
  int32,
  sint32: int32,
  sfixed32: int32,
  uint32,
  fixed32: uint32,
};
const longs = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);

const isLong = (value: unknown): boolean =>
  value !== null && typeof value === 'object' && 'low' in value && 'high' in value;

/** Why `value` does not fit a field's (non-repeated) type, or undefined when it fits. */
function scalarError(field: protobuf.Field, value: unknown, path: string, errors: string[]): string | undefined {
  const type = field.resolvedType;
  if (type instanceof protobuf.Type) {
    errors.push(...messageErrors(type, value, path));
    return undefined;
  }
  if (type instanceof protobuf.Enum) {
    if (typeof value === 'string' && value in type.values) return undefined;
    if (Number.isInteger(value) && (value as number) >= int32[0] && (value as number) <= int32[1]) return undefined;
    return `one of ${Object.keys(type.values).join(', ')} (or its number)`;
  }
  const range = ranges[field.type];
  if (range)
    return Number.isInteger(value) && (value as number) >= range[0] && (value as number) <= range[1]
      ? undefined
      : `an integer from ${range[0]} to ${range[1]}`;
  if (longs.has(field.type)) {
    const unsigned = field.type.startsWith('u') || field.type === 'fixed64';
    const ok =
      (Number.isSafeInteger(value) && (!unsigned || (value as number) >= 0)) ||
      (typeof value === 'string' && (unsigned ? /^\d+$/ : /^-?\d+$/).test(value)) ||
      isLong(value);
    return ok ? undefined : `a ${field.type} (a safe integer, a decimal string or a Long)`;
  }
  switch (field.type) {
    case 'double':
    case 'float':
      return typeof value === 'number' ? undefined : 'a number';
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'a boolean';
    case 'string':
      return typeof value === 'string' ? undefined : 'a string';
    case 'bytes':
      return value instanceof Uint8Array || typeof value === 'string' ? undefined : 'bytes (a Buffer or base64)';
  }
  return undefined;
}

const show = (value: unknown) => (JSON.stringify(value) ?? String(value)).slice(0, 60);

/** The places (at most 10) where `value` does not fit `type`: unknown fields, wrong types, missing required ones. */
export function messageErrors(type: protobuf.Type, value: unknown, path = ''): string[] {
  const errors: string[] = [];
  const where = (name: string) => (path ? `${path}.${name}` : name);
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array)
    return [`${path || '(root)'}: ${show(value)} is not a ${type.name} message (an object)`];
  const given = value as Record<string, unknown>;
  for (const [name, item] of Object.entries(given)) {
    const field = type.fields[name];
    if (!field) {
      errors.push(`${where(name)}: ${type.name} has no field \`${name}\``);
      continue;
    }
    if (item === undefined || item === null) continue;
    const check = (element: unknown, at: string) => {
      const expected = scalarError(field, element, at, errors);
      if (expected) errors.push(`${at}: ${show(element)} is not ${expected}`);
    };
    if (field instanceof protobuf.MapField) {
      if (typeof item !== 'object' || Array.isArray(item)) errors.push(`${where(name)}: a map is an object`);
      else for (const [key, element] of Object.entries(item)) check(element, `${where(name)}{${key}}`);
    } else if (field.repeated) {
      if (!Array.isArray(item)) errors.push(`${where(name)}: a repeated field is an array`);
      else
        item.forEach((element, i) => {
          check(element, `${where(name)}[${i}]`);
        });
    } else check(item, where(name));
  }
  for (const oneof of type.oneofsArray) {
    const set = oneof.oneof.filter((name) => given[name] !== undefined && given[name] !== null);
    if (set.length > 1) errors.push(`${where(oneof.name)}: oneof has ${set.join(' and ')} set; at most one`);
  }
  for (const field of type.fieldsArray)
    if (field.required && (given[field.name] === undefined || given[field.name] === null))
      errors.push(`${where(field.name)}: required field missing`);
  return errors.slice(0, 10);
}
