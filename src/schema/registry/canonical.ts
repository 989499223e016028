/**
 * A schema's canonical form: its JSON with object keys sorted and no whitespace (array order, e.g. Avro's fields,
 * is kept). Two texts of the same schema get the same canonical form, so registering it twice finds the first id.
 */
import { createHash } from 'node:crypto';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { validateSchema } from '../compat/index.ts';
import type { SchemaFormat, SchemaInput } from './port.ts';

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

export interface CanonicalSchema {
  readonly format: SchemaFormat;
  /** The canonical JSON text. */
  readonly text: string;
  /** sha256 of format and text (hex): what the embedded registry looks a schema up by. */
  readonly fingerprint: string;
}

/** Validates `schema` and returns its canonical form. */
export function canonicalSchema(schema: SchemaInput, format: SchemaFormat): CanonicalSchema {
  const text = JSON.stringify(sorted(parseSchema(schema, format)));
  const fingerprint = createHash('sha256').update(`${format}\n${text}`).digest('hex');
  return { format, text, fingerprint };
}

/** Confluent's `schemaType` for a format (absent means AVRO). */
export function schemaTypeOf(format: SchemaFormat): 'AVRO' | 'JSON' {
  return format === 'avro' ? 'AVRO' : 'JSON';
}

/** The format of a Confluent `schemaType`; `EFF_SCHEMA_INVALID` for one the serdes do not speak (PROTOBUF). */
export function formatOf(schemaType: unknown): SchemaFormat {
  if (schemaType === undefined || schemaType === null || schemaType === 'AVRO') return 'avro';
  if (schemaType === 'JSON') return 'json';
  throw new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, `schemaType \`${String(schemaType)}\` is not supported`);
}
