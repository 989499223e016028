/**
 * A schema's canonical form: its JSON with object keys sorted and no whitespace (array order, e.g. Avro's fields,
 * is kept); a Protobuf file's text with `\n` line ends and no trailing blanks. Two texts of the same schema get the
 * same canonical form, so registering it twice finds the first id.
 */
import { createHash } from 'node:crypto';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { validateSchema } from '../compat/index.ts';
import { checkProtoSyntax } from '../protobuf/proto-file.ts';
import type { SchemaFormat, SchemaInput, SchemaReference } from './port.ts';

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, item]) => [key, sorted(item)]));
  }
  return value;
}

/** Parses (when text) and validates a schema; `EFF_SCHEMA_INVALID` when it is not JSON or not a valid schema. */
export function parseSchema(schema: SchemaInput, format: SchemaFormat): unknown {
  if (format === 'protobuf') {
    if (typeof schema !== 'string')
      throw new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, 'a Protobuf schema is the text of a .proto file');
    const text = protoText(schema);
    checkProtoSyntax(text);
    return text;
  }
  let parsed: unknown = schema;
  if (typeof schema === 'string') {
    try {
      parsed = JSON.parse(schema);
    } catch (error) {
      throw new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, `schema is not JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  validateSchema(format, parsed);
  return parsed;
}

/** A `.proto` text with `\n` line ends, no trailing blanks on a line, none at the end. */
const protoText = (text: string): string =>
  text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .trim();

export interface CanonicalSchema {
  readonly format: SchemaFormat;
  /** The canonical text. */
  readonly text: string;
  /** The references, checked (each a name, a subject and a positive version). */
  readonly references: SchemaReference[];
  /** sha256 of format, text and references (hex): what the embedded registry looks a schema up by. */
  readonly fingerprint: string;
}

/** `references` checked: a list of { name, subject, version }; `EFF_SCHEMA_INVALID` otherwise. */
export function referencesOf(references: unknown): SchemaReference[] {
  if (references === undefined || references === null) return [];
  const ok = (r: SchemaReference) =>
    typeof r?.name === 'string' &&
    r.name !== '' &&
    typeof r.subject === 'string' &&
    r.subject !== '' &&
    Number.isSafeInteger(r.version) &&
    r.version > 0;
  if (!Array.isArray(references) || !references.every(ok))
    throw new EffectivelyError(
      ErrorCodes.EFF_SCHEMA_INVALID,
      'references must be a list of { name, subject, version } (a version number, 1 or more)',
    );
  return references.map(({ name, subject, version }) => ({ name, subject, version }));
}

/** Validates `schema` and returns its canonical form. */
export function canonicalSchema(
  schema: SchemaInput,
  format: SchemaFormat,
  references?: readonly SchemaReference[],
): CanonicalSchema {
  const parsed = parseSchema(schema, format);
  const text = format === 'protobuf' ? (parsed as string) : JSON.stringify(sorted(parsed));
  const refs = referencesOf(references);
  // without references the fingerprint is the one rows registered before references existed carry
  const keyed = refs.length === 0 ? `${format}\n${text}` : `${format}\n${text}\n${JSON.stringify(refs)}`;
  const fingerprint = createHash('sha256').update(keyed).digest('hex');
  return { format, text, references: refs, fingerprint };
}

const schemaTypes = { avro: 'AVRO', json: 'JSON', protobuf: 'PROTOBUF' } as const;

/** Confluent's `schemaType` for a format (absent means AVRO). */
export function schemaTypeOf(format: SchemaFormat): 'AVRO' | 'JSON' | 'PROTOBUF' {
  return schemaTypes[format];
}

/** The format of a Confluent `schemaType`; `EFF_SCHEMA_INVALID` for one the serdes do not speak. */
export function formatOf(schemaType: unknown): SchemaFormat {
  if (schemaType === undefined || schemaType === null || schemaType === 'AVRO') return 'avro';
  if (schemaType === 'JSON') return 'json';
  if (schemaType === 'PROTOBUF') return 'protobuf';
  throw new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, `schemaType \`${String(schemaType)}\` is not supported`);
}
