/**
 * A JSON Schema document as the compatibility check reads it: validated for the keywords the check uses, with local
 * `$ref`s (`#/$defs/...`, `#/definitions/...`, any JSON pointer into the same document) resolved on demand. Remote
 * references are refused (EFF_SCHEMA_INVALID): the check works offline.
 */
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

export type JsonNode = boolean | Record<string, unknown>;
export interface JsonDoc {
  root: JsonNode;
}

const typeNames = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer']);
/** Keywords that never reject a value: a schema made only of these accepts anything. */
const annotations = new Set([
  'title',
  'description',
  'default',
  'examples',
  '$comment',
  '$id',
  '$schema',
  '$anchor',
  'readOnly',
  'writeOnly',
  'deprecated',
  '$defs',
  'definitions',
]);

const invalid = (message: string) =>
  new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, `invalid JSON Schema: ${message}`);
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates a schema document; throws EffectivelyError(EFF_SCHEMA_INVALID) when the check cannot read it. */
export function parseJsonSchema(raw: unknown): JsonDoc {
  const doc: JsonDoc = { root: node(raw, '#') };
  const visit = (value: unknown, where: string): void => {
    const schema = node(value, where);
    if (schema === true || schema === false) return;
    if (schema.$ref !== undefined) deref(doc, schema);
    const type = schema.type;
    if (type !== undefined && !(Array.isArray(type) ? type : [type]).every((t) => typeNames.has(t as string)))
      throw invalid(`${where}: \`type\` must be one of ${[...typeNames].join(', ')} (or an array of them)`);
    if (
      schema.required !== undefined &&
      !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))
    )
      throw invalid(`${where}: \`required\` must be an array of property names`);
    if (schema.enum !== undefined && !Array.isArray(schema.enum)) throw invalid(`${where}: \`enum\` must be an array`);
    for (const key of ['properties', '$defs', 'definitions', 'patternProperties'] as const) {
      const map = schema[key];
      if (map === undefined) continue;
      if (!isObject(map)) throw invalid(`${where}: \`${key}\` must be an object of schemas`);
      for (const [name, sub] of Object.entries(map)) visit(sub, `${where}/${key}/${name}`);
    }
    for (const key of ['additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'] as const)
      if (schema[key] !== undefined) visit(schema[key], `${where}/${key}`);
    if (schema.items !== undefined) {
      if (Array.isArray(schema.items)) for (const [i, s] of schema.items.entries()) visit(s, `${where}/items/${i}`);
      else visit(schema.items, `${where}/items`);
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
      const list = schema[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.length === 0) throw invalid(`${where}: \`${key}\` must be a non-empty array`);
      for (const [i, s] of list.entries()) visit(s, `${where}/${key}/${i}`);
    }
  };
  visit(doc.root, '#');
  return doc;
}

function node(value: unknown, where: string): JsonNode {
  if (typeof value === 'boolean' || isObject(value)) return value;
  throw invalid(`${where}: a schema must be an object or a boolean`);
}

/** Follows `$ref` (siblings of a `$ref` are ignored, as in draft 7) until a schema without one. */
export function deref(doc: JsonDoc, schema: JsonNode): JsonNode {
  let current = schema;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops > 32) throw invalid(`\`$ref\` ${current.$ref} loops through references only`);
    current = pointer(doc, current.$ref);
  }
  if (isObject(current) && current.$ref !== undefined) throw invalid('`$ref` must be a string');
  return current;
}

function pointer(doc: JsonDoc, ref: string): JsonNode {
  if (!ref.startsWith('#')) throw invalid(`\`$ref\` ${ref}: only local references (#/...) are supported offline`);
  let target: unknown = doc.root;
  for (const token of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
    target = isObject(target) ? target[key] : Array.isArray(target) ? target[Number(key)] : undefined;
    if (target === undefined) throw invalid(`\`$ref\` ${ref} points at nothing`);
  }
  return node(target, ref);
}

/** The allowed types, or undefined for any. */
export function typesOf(schema: JsonNode): Set<string> | undefined {
  if (!isObject(schema) || schema.type === undefined) return undefined;
  return new Set((Array.isArray(schema.type) ? schema.type : [schema.type]) as string[]);
}

/** Whether a schema with these types accepts values of a type (a `number` schema accepts integers). */
export const accepts = (types: Set<string> | undefined, type: string): boolean =>
  types === undefined || types.has(type) || (type === 'integer' && types.has('number'));

/** Whether a schema with these types may hold values of a family (`number` includes `integer`). */
export const mayBe = (types: Set<string> | undefined, family: string): boolean =>
  types === undefined || types.has(family) || (family === 'number' && types.has('integer'));

/** Whether a schema accepts every value. */
export const acceptsAll = (schema: JsonNode): boolean =>
  schema === true || (isObject(schema) && Object.keys(schema).every((k) => annotations.has(k)));

/** The allowed values (`enum`, or `const` as a one-value enum), or undefined when not limited. */
export function enumOf(schema: JsonNode): unknown[] | undefined {
  if (!isObject(schema)) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum;
  return 'const' in schema ? [schema.const] : undefined;
}

export interface ObjectModel {
  properties: Record<string, JsonNode>;
  required: Set<string>;
  /** `patternProperties`: [source, regex, schema]; a regex this engine cannot read matches nothing. */
  patterns: [string, RegExp | undefined, JsonNode][];
  /** What other properties may hold (`false` for a closed content model). */
  additional: JsonNode;
}

function regex(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'u');
  } catch {
    return undefined;
  }
}

/**
 * Properties, `required`, `patternProperties` and what other properties may hold. `unevaluatedProperties` stands for
 * `additionalProperties` when that is absent (exact for a schema without `allOf`/`$ref` siblings, which is how it is
 * used to close a model).
 */
export function objectModel(schema: JsonNode): ObjectModel {
  if (!isObject(schema)) return { properties: {}, required: new Set(), patterns: [], additional: schema };
  const patterns = isObject(schema.patternProperties) ? schema.patternProperties : {};
  return {
    properties: (isObject(schema.properties) ? schema.properties : {}) as Record<string, JsonNode>,
    required: new Set((schema.required as string[] | undefined) ?? []),
    patterns: Object.entries(patterns).map(([source, sub]) => [source, regex(source), sub as JsonNode]),
    additional: ((schema.additionalProperties ?? schema.unevaluatedProperties) as JsonNode | undefined) ?? true,
  };
}

/** The schemas a property of this name (not among `properties`) must satisfy: its patterns, else `additional`. */
export function othersFor(model: ObjectModel, name: string): JsonNode[] {
  const matching = model.patterns.filter(([, re]) => re?.test(name)).map(([, , sub]) => sub);
  return matching.length > 0 ? matching : [model.additional];
}

/**
 * An array schema as positions: `prefix` item schemas (draft 2020-12 `prefixItems`, or draft 7's `items` array), then
 * `rest` for every later item (`items`, `additionalItems`, `unevaluatedItems`; true when none). An `additionalItems`
 * without any `items` is read as the items' schema, as the schema registry reads it: validators ignore it there, so
 * this is stricter than needed, never laxer (a schema that says it surely means it).
 */
export function arrayModel(schema: Record<string, unknown>): { prefix: JsonNode[]; rest: JsonNode } {
  const tail = ((schema.unevaluatedItems ?? schema.additionalItems) as JsonNode | undefined) ?? true;
  if (Array.isArray(schema.prefixItems))
    return { prefix: schema.prefixItems as JsonNode[], rest: (schema.items as JsonNode | undefined) ?? tail };
  if (Array.isArray(schema.items))
    return { prefix: schema.items as JsonNode[], rest: (schema.additionalItems as JsonNode | undefined) ?? tail };
  return { prefix: [], rest: (schema.items as JsonNode | undefined) ?? tail };
}

/** A schema's `allOf` parts, each merged with the schema's other keywords, and those keywords alone (made once). */
const conjunctions = new WeakMap<object, { parts: JsonNode[]; rest: Record<string, unknown> }>();
export function conjunctsOf(
  doc: JsonDoc,
  schema: Record<string, unknown>,
): { parts: JsonNode[]; rest: Record<string, unknown> } | undefined {
  if (!Array.isArray(schema.allOf)) return undefined;
  const known = conjunctions.get(schema);
  if (known) return known;
  const { allOf, ...rest } = schema;
  const parts = (allOf as JsonNode[]).map((part) => {
    const resolved = deref(doc, part);
    return resolved === false || resolved === true ? (resolved === false ? false : rest) : { ...rest, ...resolved };
  });
  const made = { parts, rest };
  conjunctions.set(schema, made);
  return made;
}

export interface Union {
  keyword: string;
  branches: JsonNode[];
}
/** Merged branches are made once per union, so a recursive schema reached through a union is recognised again. */
const unions = new WeakMap<object, Union>();

/** `anyOf`/`oneOf` branches, each merged with the schema's other keywords; undefined when the schema has neither. */
export function branchesOf(doc: JsonDoc, schema: JsonNode): Union | undefined {
  if (!isObject(schema)) return undefined;
  const keyword = Array.isArray(schema.anyOf) ? 'anyOf' : Array.isArray(schema.oneOf) ? 'oneOf' : undefined;
  if (keyword === undefined) return undefined;
  const known = unions.get(schema);
  if (known) return known;
  const { [keyword]: list, ...rest } = schema;
  const siblings = Object.keys(rest).length > 0;
  const branches = (list as JsonNode[]).map((b) => {
    const branch = deref(doc, b);
    if (branch === false || !siblings) return branch;
    return { ...rest, ...(branch === true ? {} : branch) };
  });
  const union = { keyword, branches };
  unions.set(schema, union);
  return union;
}

/** `integer`, `string|null`, `any`, `oneOf [string, integer]`: for messages. */
export function describeJson(doc: JsonDoc, schema: JsonNode, depth = 0): string {
  const resolved = deref(doc, schema);
  if (resolved === false) return 'nothing';
  const union = branchesOf(doc, resolved);
  // nested unions are described two levels deep: a message must not grow with 2^depth (or loop on a recursive one)
  if (union && depth >= 2) return `${union.keyword} […]`;
  if (union) {
    const shown = union.branches.slice(0, 8).map((b) => describeJson(doc, b, depth + 1));
    const more = union.branches.length > 8 ? `, … ${union.branches.length - 8} more` : '';
    return `${union.keyword} [${shown.join(', ')}${more}]`;
  }
  const types = typesOf(resolved);
  return types ? [...types].join('|') : 'any';
}

/** Equality of JSON values, regardless of key order. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'undefined';
}
